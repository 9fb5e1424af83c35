-- SQLite has one writer at a time: claims from a limited queue take turns already.
SELECT :queue
