-- Take the chore :name until :until: free, expired, or already ours. No row
-- changes when another holder's lease still runs.
INSERT INTO jobtable_leases (name, holder, until) VALUES (:name, :holder, :until)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
WHERE jobtable_leases.holder = excluded.holder OR jobtable_leases.until <= :now
