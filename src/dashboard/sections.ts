import {
  ANALYTICS_PATH,
  BILLING_PATH,
  EXPORTS_PATH,
  INSTITUTION_SETTINGS_PATH,
  LTI_PATH,
  MEMBERS_PATH,
  TOKENS_PATH,
  WEBHOOKS_PATH,
  XAPI_PATH,
} from "./prefixes";

/**
 * The dashboard's sections, in the order the navigation shows them: only sections that exist are
 * listed, so the navigation never offers a page that is not there. A new section adds its entry here
 * (see docs/design/dashboard.md).
 */
export interface Section {
  id: string;
  /** The navigation's group heading. */
  group: string;
  label: string;
  path: string;
  /** One line for the overview page. */
  summary: string;
}

export const SECTIONS: readonly Section[] = [
  {
    id: "members",
    group: "People",
    label: "Members",
    path: MEMBERS_PATH,
    summary:
      "Find members by name, role, status or group; invite them, change roles, suspend or remove; upload a CSV.",
  },
  {
    id: "analytics",
    group: "Insights",
    label: "Analytics",
    path: ANALYTICS_PATH,
    summary:
      "Active learners, practice minutes, completions, CEFR levels, top courses and groups, as charts in your branding.",
  },
  {
    id: "tokens",
    group: "Settings → Integrations",
    label: "API tokens",
    path: TOKENS_PATH,
    summary:
      "Create tokens for your systems to call the Lingua API, see when they were last used, revoke them.",
  },
  {
    id: "webhooks",
    group: "Settings → Integrations",
    label: "Webhooks",
    path: WEBHOOKS_PATH,
    summary:
      "Receive events as signed POSTs: choose the events, send a test ping, read the delivery log, redeliver.",
  },
  {
    id: "exports",
    group: "Settings → Integrations",
    label: "Exports",
    path: EXPORTS_PATH,
    summary: "Request CSV files of your learning data, watch them being generated, download them.",
  },
  {
    id: "lti",
    group: "Settings → Integrations",
    label: "LTI",
    path: LTI_PATH,
    summary:
      "Register your LMS (by link or by hand), copy the values it needs, read the launch log with each refusal's reason.",
  },
  {
    id: "xapi",
    group: "Settings → Integrations",
    label: "xAPI",
    path: XAPI_PATH,
    summary:
      "Forward learning statements to your LRS: endpoints with health, a test call, the forwarding log, backfills.",
  },
  {
    id: "billing",
    group: "Settings",
    label: "Billing",
    path: BILLING_PATH,
    summary:
      "Your plan, trial and seats; upgrade through checkout, open the billing portal, apply a promotion code.",
  },
  {
    id: "institution",
    group: "Settings",
    label: "Institution",
    path: INSTITUTION_SETTINGS_PATH,
    summary: "Name, branding, locale and time zone; single sign-on and compliance documents.",
  },
];
