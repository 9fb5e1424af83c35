-- SQLite has one writer at a time: claims of a limited kind take turns already.
SELECT :kind
