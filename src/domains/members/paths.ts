import { INSTITUTIONS } from "./prefixes";

/** The paths of members' operations, below their institution's. */
export const MEMBERS = `${INSTITUTIONS}/{id}/members` as const;
export const MEMBER = `${MEMBERS}/{member}` as const;
export const INVITATIONS = `${INSTITUTIONS}/{id}/invitations` as const;
export const BULK = `${MEMBERS}/bulk` as const;
export const BULK_JOB = `${BULK}/{job}` as const;
