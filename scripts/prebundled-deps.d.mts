export const UNBUNDLED_DEPENDENCIES: string[];
export function prebundledDependencies(root: string): string[];
