// The order sources wait for one another in (`dependsOn`): a cycle would have each wait forever, so it is
// refused, at config load for the configuration's sources and at run time for sources added as objects.

/**
 * A cycle in `dependsOn` (source → the sources it waits for), as the path that closes it
 * (`['a', 'b', 'a']`; a source naming itself: `['a', 'a']`), or undefined when there is none. Names that
 * are not in the graph are skipped (an unknown name is its own error). Deterministic: sources are visited in
 * the graph's order.
 */
export function findDependencyCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (source: string): string[] | undefined => {
    const at = onPath.indexOf(source);
    if (at !== -1) return [...onPath.slice(at), source];
    if (done.has(source)) return undefined;
    onPath.push(source);
    for (const dependency of graph.get(source) ?? []) {
      if (!graph.has(dependency)) continue;
      const cycle = visit(dependency);
      if (cycle !== undefined) return cycle;
    }
    onPath.pop();
    done.add(source);
    return undefined;
  };
  for (const source of graph.keys()) {
    const cycle = visit(source);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

/** `a → b → a`, as a message shows a cycle. */
export function describeCycle(cycle: readonly string[]): string {
  return cycle.join(' → ');
}
