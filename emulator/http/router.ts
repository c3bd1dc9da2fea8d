/**
 * A small router: exact paths in one map lookup, patterns with `:param`
 * segments tried per method with the most static segments first, so that
 * `/v1/transactions/search` wins over `/v1/transactions/:id`.
 */
export interface Match<H> {
  /** `GET /v1/transactions/:id`: the key of stats and faults. */
  key: string;
  handler: H;
  params: Record<string, string>;
}

interface PatternRoute<H> {
  key: string;
  segments: string[];
  statics: number;
  handler: H;
}

export class Router<H> {
  private readonly exact = new Map<string, { key: string; handler: H }>();
  private readonly patterns = new Map<string, PatternRoute<H>[]>();
  private readonly keys: string[] = [];

  add(method: string, pattern: string, handler: H): this {
    const key = `${method} ${pattern}`;
    this.keys.push(key);
    if (!pattern.includes(':')) {
      this.exact.set(key, { key, handler });
      return this;
    }
    const segments = pattern.split('/').slice(1);
    const list = this.patterns.get(method) ?? [];
    list.push({ key, segments, statics: segments.filter((s) => !s.startsWith(':')).length, handler });
    list.sort((a, b) => b.statics - a.statics);
    this.patterns.set(method, list);
    return this;
  }

  routeKeys(): readonly string[] {
    return this.keys;
  }

  match(method: string, rawPath: string): Match<H> | undefined {
    const path = rawPath.length > 1 && rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
    const hit = this.exact.get(`${method} ${path}`);
    if (hit) return { key: hit.key, handler: hit.handler, params: {} };
    const list = this.patterns.get(method);
    if (!list) return undefined;
    const parts = path.split('/').slice(1);
    outer: for (const route of list) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const seg = route.segments[i] as string;
        const part = parts[i] as string;
        if (seg.startsWith(':')) {
          if (part === '') continue outer;
          params[seg.slice(1)] = safeDecode(part);
        } else if (seg !== part) continue outer;
      }
      return { key: route.key, handler: route.handler, params };
    }
    return undefined;
  }
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
