export * from "./content";
export * from "./events";
export * from "./exports";
export * from "./identity";
export * from "./institution-insights";
export * from "./progress";
export * from "./tokens";
export * from "./webhooks";
