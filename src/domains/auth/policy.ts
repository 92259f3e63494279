/**
 * Who keeps signing in with a password while their institution enforces SSO: platform staff, and the
 * one institution admin the SSO settings name as break-glass (while still an admin of it).
 */
export function keepsPasswordUnderEnforcedSso(
  user: { id: string; role: string; institutionId: string | null } | undefined,
  enforced: { institutionId: string; breakGlassUserId: string | null },
): boolean {
  if (!user) return false;
  if (user.role === "platform_admin") return true;
  return (
    user.id === enforced.breakGlassUserId &&
    user.institutionId === enforced.institutionId &&
    user.role === "institution_admin"
  );
}
