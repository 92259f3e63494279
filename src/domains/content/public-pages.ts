import { purgeEdgeCache } from "../../platform/http/edge-cache";

/**
 * Where published courses are served publicly (the catalog domain's routes), and how their cached
 * copies are found when a course changes. It lives with the content, which changes the courses: the
 * catalog reads content, content never reads the catalog.
 */
export const PUBLIC_COURSES_PATH = "/api/public/courses";

/** The cache key of a course's public page (it takes no query parameters). */
export function publicCourseKey(origin: string, slug: string): string {
  return `${origin}${PUBLIC_COURSES_PATH}/${encodeURIComponent(slug)}`;
}

/**
 * The unfiltered first list pages as integrators most often ask for them (keys normalised as
 * `normalisedUrl` does: known parameters only, sorted by name).
 */
function firstListPageKeys(origin: string): string[] {
  const keys: string[] = [];
  for (const page of [null, "1"]) {
    for (const perPage of [null, "25", "100"]) {
      const params = new URLSearchParams();
      if (page) params.set("page", page);
      if (perPage) params.set("per_page", perPage);
      const query = params.toString();
      keys.push(`${origin}${PUBLIC_COURSES_PATH}${query ? `?${query}` : ""}`);
    }
  }
  return keys;
}

/**
 * After a course changes: deletes, in this location's cache, the course's public page and the
 * unfiltered first list pages. Every other cached page (filtered lists, later pages, other
 * locations) expires within 60 s, the lifetime of every stored copy.
 */
export async function purgePublicCoursePages(requestUrl: string, slug: string): Promise<void> {
  const { origin } = new URL(requestUrl);
  await purgeEdgeCache([publicCourseKey(origin, slug), ...firstListPageKeys(origin)]);
}
