// The `teams` service: a MessageCard to an Office 365 connector, or an Adaptive Card to a Power Automate workflow.
import { NotificationDeliveryError } from '../notification-delivery-error.ts';
import type { ServiceConfig } from '../service-options.ts';
import { callService, jsonField, type NotificationSender } from './notification-sender.ts';

type TeamsService = Extract<ServiceConfig, { type: 'teams' }>;

const str = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * Posts to the recipient's URL (`recipientUrls.<recipient>`). The template's `teams` block: `title`,
 * `text` (default `message`), `summary`, `themeColor`, and JSON text in `facts`, `sections` and
 * `potentialAction`; `template` (a whole card as JSON) replaces the built card. With `cardFormat:
 * adaptiveCard` the card is an Adaptive Card (`teams.adaptiveCard` replaces it) in a message attachment,
 * as workflows expect. A connector answers `1`, a workflow 202; an answer with another text failed.
 */
export const sendTeams: NotificationSender<TeamsService> = async (request, http) => {
  const { service, notification, recipient, templateKey } = request;
  const url = service.options.recipientUrls[recipient];
  if (url === undefined)
    throw new NotificationDeliveryError(service.key, `recipientUrls has no entry "${recipient}"`, false);
  const teams = notification.teams ?? {};
  const field = (name: string): unknown => jsonField(service.key, templateKey, `teams.${name}`, teams[name]);
  const title = str(teams.title);
  const text = str(teams.text) ?? notification.message ?? '';
  const facts = field('facts') as Array<{ name?: unknown; value?: unknown }> | undefined;
  let body: unknown;
  if (service.options.cardFormat === 'adaptiveCard') {
    const card = field('adaptiveCard') ?? {
      $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
      type: 'AdaptiveCard',
      version: '1.4',
      body: [
        ...(title !== undefined
          ? [{ type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true }]
          : []),
        { type: 'TextBlock', text, wrap: true },
        ...(facts !== undefined
          ? [
              {
                type: 'FactSet',
                facts: facts.map((f) => ({ title: String(f.name ?? ''), value: String(f.value ?? '') })),
              },
            ]
          : []),
      ],
    };
    body = {
      type: 'message',
      attachments: [
        { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card },
      ],
    };
  } else {
    const sections = (field('sections') as unknown[] | undefined) ?? [];
    body = field('template') ?? {
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
      summary: str(teams.summary) ?? title ?? text.slice(0, 80),
      ...(title !== undefined && { title }),
      text,
      ...(str(teams.themeColor) !== undefined && { themeColor: str(teams.themeColor) }),
      ...((sections.length > 0 || facts !== undefined) && {
        sections: [...sections, ...(facts !== undefined ? [{ facts }] : [])],
      }),
      ...(field('potentialAction') !== undefined && { potentialAction: field('potentialAction') }),
    };
  }
  const response = await callService(service.key, http, url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = response.text.trim();
  if (response.status === 200 && answer !== '' && answer !== '1')
    throw new NotificationDeliveryError(
      service.key,
      `answered: ${answer.slice(0, 200)}`,
      /429|throttl/i.test(answer),
    );
  return 'sent';
};
