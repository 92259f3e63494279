import { EVENT_TYPES, type EventType } from "../../platform/events";

const USER = "usr_01JD3Q8W2X4Y5Z6A7B8C9D0E1F";
const COURSE = "crs_01JD3Q8W2X4Y5Z6A7B8C9D0E1G";

/** An example `data` of each event type, as it is delivered; the catalogue endpoint shows them. */
export const EVENT_EXAMPLES: Record<EventType, Record<string, unknown>> = {
  ping: {
    webhook_id: "whk_01JD3Q8W2X4Y5Z6A7B8C9D0E1H",
    message: "Test delivery from Lingua. Answer 2xx to confirm.",
  },
  "lesson.completed": {
    user_id: USER,
    lesson_id: "les_01JD3Q8W2X4Y5Z6A7B8C9D0E1J",
    course_id: COURSE,
    score: 0.92,
    items: 12,
    completed_at: "2026-11-21T09:30:00Z",
  },
  "course.completed": { user_id: USER, course_id: COURSE, xp: 1240, completed_at: "2026-11-21T09:30:00Z" },
  "achievement.unlocked": {
    user_id: USER,
    code: "first_lesson",
    name: "First lesson",
    unlocked_at: "2026-11-21T09:30:00Z",
  },
  "cefr.level_changed": { user_id: USER, skill: "reading", from: "A2", to: "B1" },
  "streak.milestone": { user_id: USER, days: 7, day: "2026-11-21" },
  "member.created": {
    user_id: USER,
    email: "ana@acme.example",
    name: "Ana Lima",
    role: "learner",
    status: "invited",
    external_id: "SIS-10023",
    groups: ["class-7b"],
    created_at: "2026-11-21T09:30:00Z",
  },
  "member.updated": {
    user_id: USER,
    changes: { role: { from: "learner", to: "instructor" } },
    updated_at: "2026-11-21T09:30:00Z",
  },
  "member.removed": { user_id: USER, removed_at: "2026-11-21T09:30:00Z" },
  "export.completed": {
    export_id: "exp_01JD3Q8W2X4Y5Z6A7B8C9D0E1K",
    type: "activity",
    row_count: 125000,
    byte_size: 14680064,
    download_url: "/api/integrations/exports/exp_01JD3Q8W2X4Y5Z6A7B8C9D0E1K/download",
    expires_at: "2026-11-28T09:30:00Z",
  },
  "export.failed": {
    export_id: "exp_01JD3Q8W2X4Y5Z6A7B8C9D0E1K",
    type: "activity",
    error: "The export could not be written; request it again.",
  },
  "xapi_endpoint.failing": {
    endpoint_id: "xep_01JD3Q8W2X4Y5Z6A7B8C9D0E1N",
    name: "Watershed (production)",
    failing_since: "2026-11-20T09:30:00Z",
    last_error: "HTTP 503",
  },
  "subscription.updated": {
    subscription_id: "sub_1QxYzA2eZvKYlo2C8mN3pQrS",
    status: "active",
    plan: "pro",
    interval: "month",
    seats: 25,
    current_period_start: "2026-11-21T09:30:00Z",
    current_period_end: "2026-12-21T09:30:00Z",
    cancel_at_period_end: false,
    trial_end: null,
    changes: { status: { from: "trialing", to: "active" } },
    updated_at: "2026-11-21T09:30:00Z",
  },
  "trial.will_end": {
    subscription_id: "sub_1QxYzA2eZvKYlo2C8mN3pQrS",
    plan: "pro",
    trial_end: "2026-11-24T09:30:00Z",
    payment_method_on_file: false,
    at_trial_end: "downgrade_to_free",
  },
  "invoice.payment_failed": {
    invoice_id: "in_1QxYzA2eZvKYlo2C0aB1cD2e",
    subscription_id: "sub_1QxYzA2eZvKYlo2C8mN3pQrS",
    subscription_status: "past_due",
    amount_due: 22500,
    currency: "eur",
    attempt_count: 1,
    next_payment_attempt: "2026-11-24T09:30:00Z",
  },
};

export function eventCatalogue() {
  return (Object.keys(EVENT_TYPES) as EventType[]).map((type) => ({
    type,
    description: EVENT_TYPES[type],
    subscribable: type !== "ping",
    example: {
      id: "evt_01JD3Q8W2X4Y5Z6A7B8C9D0E1M",
      type,
      created_at: "2026-11-21T09:30:00Z",
      data: EVENT_EXAMPLES[type],
    },
  }));
}
