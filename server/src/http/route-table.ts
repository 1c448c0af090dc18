/**
 * The methods each mounted path answers, so that a known path called with another method gets
 * 405 with an Allow header (before auth), and OPTIONS can name the methods.
 */
export class RouteTable {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];

  add(method: string, path: string): void {
    const pattern = pathPattern(path);
    const existing = this.routes.find((route) => route.pattern.source === pattern.source);
    if (existing) existing.methods.add(method.toUpperCase());
    else this.routes.push({ pattern, methods: new Set([method.toUpperCase()]) });
  }

  /** The methods allowed on a path, or undefined when no route has it. */
  allowedMethods(path: string): string[] | undefined {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) route.methods.forEach((method) => methods.add(method));
    }
    if (methods.size === 0) return undefined;
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    return [...methods].sort();
  }
}

/** `/v1/memories/:id` → /^\/v1\/memories\/[^/]+\/?$/ */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}/?$`);
}
