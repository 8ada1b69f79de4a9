// A problem a render found before or while rendering: the file and line it is about, in the user's words.

/** Shown as a source problem (status, Events, logs) like a manifest's: file, line, message. */
export interface RenderProblem {
  /** Repository path (the kustomization file, or `<dir>/Chart.yaml`). */
  file: string;
  /** 1-based; 1 when the problem is about the whole file. */
  line: number;
  message: string;
}
