// The shape of a statement as Lingua sends it, and the interaction type of each item type.
import type { ItemType } from "../../../db/schema";

export type LanguageMap = Record<string, string>;
export interface Activity {
  objectType: "Activity";
  id: string;
  definition: {
    name: LanguageMap;
    description?: LanguageMap;
    type: string;
    interactionType?: InteractionType;
  };
}
export interface XapiStatement {
  id: string;
  actor: {
    objectType: "Agent";
    name?: string;
    account?: { homePage: string; name: string };
    mbox?: string;
  };
  verb: { id: string; display: LanguageMap };
  object: Activity;
  result?: {
    success?: boolean;
    completion?: boolean;
    score?: { scaled: number; raw: number; min: number; max: number };
    duration?: string;
    response?: string;
    extensions?: Record<string, unknown>;
  };
  context: {
    platform: "Lingua";
    language?: string;
    contextActivities?: { parent?: Activity[]; grouping?: Activity[] };
    extensions?: Record<string, unknown>;
  };
  timestamp: string;
}

export type InteractionType =
  | "true-false"
  | "choice"
  | "fill-in"
  | "long-fill-in"
  | "matching"
  | "performance"
  | "sequencing"
  | "likert"
  | "numeric"
  | "other";

/**
 * Each Lingua item type as an xAPI interaction type (the xAPI specification's cmi.interaction
 * types): picking one of the options is `choice`; a typed translation `fill-in`; free writing
 * `long-fill-in`; pairs `matching`; speaking, judged on a recording, `other`.
 */
export const INTERACTION_TYPES: Record<ItemType, InteractionType> = {
  vocabulary: "choice",
  grammar: "choice",
  listening: "choice",
  reading: "choice",
  multiple_choice: "choice",
  translation: "fill-in",
  writing: "long-fill-in",
  matching: "matching",
  speaking: "other",
};
