// Test fixture: a valid canary Rollout as a user keeps it in Git (argoproj.io/v1alpha1 YAML text).

/**
 * A valid canary Rollout `apps/web`. Tests replace one line or block of it to break exactly one thing
 * and expect problems at its lines, so every line stays where it is:
 * 1 apiVersion · 7 replicas · 8-10 selector · 13-14 template labels · 18 image · 20-21 resources ·
 * 22 strategy · 23 canary · 25-28 steps (setWeight 20, pause 30s, setWeight 60, pause).
 */
export const ROLLOUT_YAML = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
  namespace: apps
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx:1.27
          resources:
            requests: {cpu: 100m, memory: 64Mi}
            limits: {cpu: "1", memory: 128Mi}
  strategy:
    canary:
      steps:
        - setWeight: 20
        - pause: {duration: 30s}
        - setWeight: 60
        - pause: {}
`;
