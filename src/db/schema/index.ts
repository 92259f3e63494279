export * from "./content";
export * from "./events";
export * from "./exports";
export * from "./identity";
export * from "./institutions";
export * from "./progress";
export * from "./tokens";
export * from "./webhooks";
