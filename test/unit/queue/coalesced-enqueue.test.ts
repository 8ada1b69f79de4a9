import { describe, expect, it } from 'vitest';
import { coalescedEnqueue } from '../../../src/queue/coalesced-enqueue.ts';

/** A send that records each call and answers only when told to. */
function heldSend() {
  const sent: string[] = [];
  const answers: Array<{ key: string; answer: (err?: Error) => void }> = [];
  const send = (key: string): Promise<unknown> => {
    sent.push(key);
    return new Promise((resolve, reject) =>
      answers.push({ key, answer: (err) => (err ? reject(err) : resolve(undefined)) }),
    );
  };
  const answerNext = async (err?: Error): Promise<void> => {
    answers.shift()!.answer(err);
    // Let the settled send's continuations run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { send, sent, answerNext };
}

describe('coalescedEnqueue', () => {
  it('sends the calls made while one is in flight as one send, after it', async () => {
    const { send, sent, answerNext } = heldSend();
    const enqueue = coalescedEnqueue(send);
    const first = enqueue('default/web');
    const during = [enqueue('default/web'), enqueue('default/web'), enqueue('default/web')];
    expect(sent).toEqual(['default/web']);
    await answerNext();
    await first;
    expect(sent).toEqual(['default/web', 'default/web']);
    let settled = false;
    void Promise.all(during).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await answerNext();
    await Promise.all(during);
    // Nothing more is owed: the next call is sent at once.
    void enqueue('default/web');
    expect(sent).toHaveLength(3);
  });

  it('never holds one key behind another', () => {
    const { send, sent } = heldSend();
    const enqueue = coalescedEnqueue(send);
    void enqueue('default/a');
    void enqueue('default/b');
    expect(sent).toEqual(['default/a', 'default/b']);
  });

  it('still sends the owed one when the send in flight fails, and hands each call its own outcome', async () => {
    const { send, sent, answerNext } = heldSend();
    const enqueue = coalescedEnqueue(send);
    const first = enqueue('default/web');
    const during = enqueue('default/web');
    await answerNext(new Error('redis away'));
    await expect(first).rejects.toThrow('redis away');
    expect(sent).toHaveLength(2);
    await answerNext();
    await expect(during).resolves.toBeUndefined();
  });
});
