/**
 * D1's Sessions API for one invocation (design/d1-sessions.md). Every query of a request, a queue
 * batch, a cron run or a Durable Object call runs in one `D1DatabaseSession`: its reads are
 * sequentially consistent with its writes (a request reads its own writes, even from a replica),
 * and its bookmark tells the next request where to start.
 */

/** Where a session starts: a constraint, or a bookmark (`isBookmark`) a client sent back. */
export type D1SessionStart = D1SessionConstraint | D1SessionBookmark;

/**
 * The shape of D1's bookmarks: three 8-digit and one 32-digit lower-case hex fields, ordered as
 * strings (the runtime keeps the greater of two by `localeCompare`, as `laterBookmark` does). D1
 * itself refuses a malformed bookmark only when the first query runs; checking the shape first turns
 * a client's typo into a 400 before anything is read or written.
 */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export function isBookmark(value: string): boolean {
  return BOOKMARK.test(value);
}

/** The later of two bookmarks (either may be missing). */
export function laterBookmark(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.localeCompare(b) < 0 ? b : a;
}

/**
 * A bookmark of one database (design/multi-database.md): what `X-D1-Bookmark` carries. `DB`'s is the
 * bare bookmark, so that clients of a single database see what they always saw; another database's
 * is prefixed with its binding's name (`DB_1:00000085-…`). Positions of two databases are not ordered.
 */
export interface PlacedBookmark {
  binding: string;
  bookmark: string;
}

const PLACED = /^(DB_[1-9][0-9]*):(.+)$/;

/** The header's value parsed, or null when it is not a bookmark of any database. */
export function parsePlacedBookmark(value: string): PlacedBookmark | null {
  const placed = PLACED.exec(value);
  const binding = placed?.[1] ?? "DB";
  const bookmark = placed?.[2] ?? value;
  return isBookmark(bookmark) ? { binding, bookmark } : null;
}

export function formatPlacedBookmark({ binding, bookmark }: PlacedBookmark): string {
  return binding === "DB" ? bookmark : `${binding}:${bookmark}`;
}

/** The later of two placed bookmarks of the same database; of two databases', `b` (the newer place). */
export function laterPlacedBookmark(
  a: PlacedBookmark | null,
  b: PlacedBookmark | null,
): PlacedBookmark | null {
  if (a === null || b === null || a.binding !== b.binding) return b ?? a;
  return { binding: a.binding, bookmark: laterBookmark(a.bookmark, b.bookmark) as string };
}

/**
 * One invocation's session, opened on its first query. `database` is the session in the shape of
 * D1's binding, which is what drizzle and the domains' raw statements take: `prepare` and `batch`
 * run in whatever session is current, so a handle taken before `observe` moved the session on
 * follows it.
 */
export class InvocationSession {
  private session: D1DatabaseSession | null = null;
  /** A bookmark reached by another session of this invocation (`observe`), or null. */
  private observed: string | null = null;
  /** Where a session on another database would start: a client's bookmark of that database. */
  private readonly startsElsewhere = new Map<string, D1SessionStart>();
  private toleratesStaleReads = false;
  readonly database: D1Database;

  /**
   * `binding` is read on the first query: an invocation that reads nothing needs no binding at all.
   * `name` is the binding's name (`DB`, `DB_1`, …): `moveTo` re-opens the session on another one.
   */
  constructor(
    private binding: () => D1Database,
    private start: D1SessionStart,
    public name = "DB",
  ) {
    this.database = {
      prepare: (query: string) => this.current().prepare(query),
      batch: <T = unknown>(statements: D1PreparedStatement[]) => this.current().batch<T>(statements),
      withSession: (constraintOrBookmark?: D1SessionStart) =>
        this.binding().withSession(constraintOrBookmark),
      exec: () => Promise.reject(new Error("exec runs outside a D1 session: not on the service context")),
      dump: () => Promise.reject(new Error("dump runs outside a D1 session: not on the service context")),
    } as D1Database;
  }

  current(): D1DatabaseSession {
    if (this.session) return this.session;
    // A test double without sessions (an instrumented or failing binding) is its own session. A
    // deployed binding and local D1 (workerd's) always have `withSession`.
    const binding = this.binding() as Partial<Pick<D1Database, "withSession">> & D1Database;
    this.session =
      typeof binding.withSession === "function"
        ? binding.withSession(this.start)
        : (binding as unknown as D1DatabaseSession);
    return this.session;
  }

  /** The session's latest bookmark, or the one it starts from, or what `observe` saw, whichever is latest. */
  bookmark(): string | null {
    const own =
      this.session && typeof this.session.getBookmark === "function"
        ? this.session.getBookmark()
        : isBookmark(this.start)
          ? this.start
          : null;
    return laterBookmark(own !== null && isBookmark(own) ? own : null, this.observed);
  }

  /** Another session of this invocation reached `bookmark`: later queries start from it if it is later. */
  observe(bookmark: string): void {
    if (!isBookmark(bookmark) || laterBookmark(this.bookmark(), bookmark) !== bookmark) return;
    if (bookmark === this.bookmark()) return;
    this.observed = bookmark;
    this.start = bookmark;
    this.session = null;
  }

  tolerateStaleReads(): void {
    this.toleratesStaleReads = true;
    if (!this.session && this.start === "first-primary") this.start = "first-unconstrained";
  }

  /** A client's bookmark of another database than this session's: where `moveTo` that one starts. */
  startElsewhere(name: string, start: D1SessionStart): void {
    this.startsElsewhere.set(name, start);
  }

  /**
   * Re-opens the session on another database (the invocation's institution lives there): later
   * queries run there, from the client's bookmark of it if one was sent, else at its primary (or any
   * replica, for reads that tolerate lag). A no-op when already there.
   */
  moveTo(name: string, binding: () => D1Database): void {
    if (name === this.name) return;
    this.startsElsewhere.set(this.name, this.bookmark() ?? this.start);
    const start = this.startsElsewhere.get(name) ?? "first-primary";
    this.name = name;
    this.binding = binding;
    this.start = start === "first-primary" && this.toleratesStaleReads ? "first-unconstrained" : start;
    this.session = null;
    this.observed = null;
  }
}

/**
 * A service context's session (platform/service/context.ts), under a symbol so that `ServiceContext`'s
 * shape stays what callers build. The accessors below take any context; this module imports nothing,
 * so that the edge cache reads a bookmark without loading the database client.
 */
export const SESSION = Symbol("d1-session");

function sessionOf(ctx: object): InvocationSession | undefined {
  return (ctx as { [SESSION]?: InvocationSession })[SESSION];
}

/**
 * The latest bookmark of the invocation's D1 session: what its response sends in `X-D1-Bookmark`.
 * Null when nothing was read or written and no bookmark was given to start from (and for a context
 * not built by `invocationContext`, such as a test's hand-made one).
 */
export function sessionBookmark(ctx: object): string | null {
  const session = sessionOf(ctx);
  const bookmark = session?.bookmark() ?? null;
  return session && bookmark ? formatPlacedBookmark({ binding: session.name, bookmark }) : null;
}

/**
 * A bookmark another session of the same invocation reached (a Durable Object that wrote for this
 * request): the context's later reads see at least it, and its response's bookmark is at least it.
 */
export function observeBookmark(ctx: object, bookmark: string | null | undefined): void {
  const session = sessionOf(ctx);
  const placed = bookmark ? parsePlacedBookmark(bookmark) : null;
  if (session && placed && placed.binding === session.name) session.observe(placed.bookmark);
}

/**
 * Declares that this invocation's reads tolerate a replica's lag (the public catalogue): a session
 * that would start at the primary starts at any replica instead. No effect once the session has
 * run a query, or when it starts from a client's bookmark (which still bounds its staleness).
 */
/** A client's bookmark of another database: where the invocation's session starts if it moves there. */
export function startElsewhere(ctx: object, binding: string, bookmark: string): void {
  sessionOf(ctx)?.startElsewhere(binding, bookmark);
}

export function tolerateStaleReads(ctx: object): void {
  sessionOf(ctx)?.tolerateStaleReads();
}
