/**
 * A page the dashboard answers instead of what was asked (403 for a refused form, 404 for an
 * unknown page): its status, a title and what the person can do next.
 */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}
