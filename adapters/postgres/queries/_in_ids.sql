-- Membership in :ids, a text[] of job ids (PostgresEngine.names).
= ANY(:ids::text[])
