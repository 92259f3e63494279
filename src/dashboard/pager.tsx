/** Previous and next links of a paginated list, keeping its other query parameters. */
export function Pager({
  path,
  query,
  page,
  perPage,
  total,
}: {
  path: string;
  query: Record<string, string>;
  page: number;
  perPage: number;
  total: number;
}) {
  const last = Math.max(1, Math.ceil(total / perPage));
  if (last === 1 && page === 1) return null;
  const href = (n: number) => `${path}?${new URLSearchParams({ ...query, page: String(n) }).toString()}`;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? (
        <a href={href(Math.min(page - 1, last))} rel="prev">
          Previous
        </a>
      ) : (
        <span />
      )}
      <span>
        Page {page} of {last}
      </span>
      {page < last ? (
        <a href={href(page + 1)} rel="next">
          Next
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}
