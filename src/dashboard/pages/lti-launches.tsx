import { LAUNCH_KINDS, LAUNCH_STATUSES } from "../../db/schema";
import type { LaunchRow } from "../../domains/lti/launch/launch-log";
import type { ConsumerRow } from "../../domains/lti/registrations/service";
import { Col, EmptyState, FilterBar, ListTable, Select, StatusBadge } from "../components";
import { When } from "../layout";
import { LAUNCHES_PATH, PER_PAGE } from "./lti";

/** The LTI launch log: every launch, accepted or refused, with each refusal's reason. */

export interface LaunchFilters {
  status: string;
  kind: string;
  consumer: string;
}

export function LaunchLog({
  rows,
  total,
  page,
  filters,
  registrations,
}: {
  rows: LaunchRow[];
  total: number;
  page: number;
  filters: LaunchFilters;
  registrations: ConsumerRow[];
}) {
  const query: Record<string, string> = {};
  if (filters.status) query.status = filters.status;
  if (filters.kind) query.kind = filters.kind;
  if (filters.consumer) query.consumer_id = filters.consumer;
  const names = new Map(registrations.map((r) => [r.id, r.name]));
  const filtered = Object.keys(query).length > 0;
  return (
    <>
      <h1>LTI launch log</h1>
      <p>Every launch from your LMS, accepted or refused, with the reason of each refusal. Newest first.</p>
      <FilterBar path={LAUNCHES_PATH} label="Filter the launches" active={filtered}>
        <Select
          id="status"
          label="Status"
          any="Every status"
          value={filters.status}
          options={LAUNCH_STATUSES.map((s) => ({ value: s, label: s }))}
        />
        <Select
          id="kind"
          label="Kind"
          any="Every kind"
          value={filters.kind}
          options={LAUNCH_KINDS.map((k) => ({ value: k, label: k.replace("_", " ") }))}
        />
        <Select
          id="consumer_id"
          label="Registration"
          any="Every registration"
          value={filters.consumer}
          options={registrations.map((r) => ({ value: r.id, label: r.name }))}
        />
      </FilterBar>
      <ListTable
        label="Launches"
        count={rows.length}
        total={total}
        path={LAUNCHES_PATH}
        query={query}
        page={page}
        perPage={PER_PAGE}
        empty={
          <EmptyState title={filtered ? "No launch matches these filters" : "No launches yet"}>
            <p>
              {filtered
                ? "Change the filters, or show every launch."
                : "Add a Lingua link to a course in your LMS and open it: the launch appears here."}
            </p>
          </EmptyState>
        }
        head={
          <>
            <Col>When</Col>
            <Col>Status</Col>
            <Col>Registration</Col>
            <Col>Kind</Col>
            <Col>User</Col>
            <Col>Reason</Col>
          </>
        }
        rows={rows.map((l) => (
          <tr>
            <td>
              <When iso={l.createdAt} />
            </td>
            <td>
              <StatusBadge text={l.status} warn={l.status === "failed"} />
            </td>
            <td>{l.consumerId ? (names.get(l.consumerId) ?? <code>{l.consumerId}</code>) : "—"}</td>
            <td>{l.kind ? l.kind.replace("_", " ") : "—"}</td>
            <td>{l.userId ? <code>{l.userId}</code> : l.sub ? <code>{l.sub}</code> : "—"}</td>
            <td>
              {l.failureReason ? <code>{l.failureReason}</code> : null}
              {l.failureDetail ? <p class="hint">{l.failureDetail}</p> : null}
              {l.targetTitle ? <span>{l.targetTitle}</span> : null}
            </td>
          </tr>
        ))}
      />
    </>
  );
}
