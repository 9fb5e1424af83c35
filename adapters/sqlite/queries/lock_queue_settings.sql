-- SQLite has one writer at a time: a claim and a change of a queue's limits never overlap.
SELECT 1
