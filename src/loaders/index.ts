// Placeholder until the loaders land; replaced by the real per-request DataLoaders.
export type Loaders = Record<string, never>;
