// A Job spec for the sandbox's Job controller, whose one pod its kubelet stand-in ends as the test says.

/** One pod, no retries: the kubelet stand-in ends it as `result` says after `duration` (e.g. `1s`; default 2 s). */
export function sandboxJobSpec(result: 'succeed' | 'fail', duration?: string) {
  return {
    backoffLimit: 0,
    template: {
      metadata: {
        annotations: {
          'sandbox.rollgate.dev/job-result': result,
          ...(duration === undefined ? {} : { 'sandbox.rollgate.dev/job-duration': duration }),
        },
      },
      spec: { restartPolicy: 'Never', containers: [{ name: 'check', image: 'check:1' }] },
    },
  };
}
