-- SQLite waits for its one writer by its busy timeout already.
SELECT 1
