/** A graph document of `nodeCount` nodes without positions (big-graph.mjs). */
export function bigGraph(nodeCount?: number): Record<string, unknown>;
