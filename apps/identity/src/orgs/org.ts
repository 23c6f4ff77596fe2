/** An organization: the tenant every user belongs to. */
export interface OrgRecord {
  id: string;
  name: string;
  createdAt: Date;
}
