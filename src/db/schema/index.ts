export * from "./identity";
export * from "./tokens";
export * from "./content";
export * from "./progress";
export * from "./events";
export * from "./webhooks";
export * from "./exports";
