-- The first priority after :after at which a fair kind has a due job (NULL: none), in the
-- runner's queues, none in a paused or limited queue: the first row of each queue read
-- (_kind_queues), not a MIN over the whole backlog.
WITH RECURSIVE {{kind_queues}}
{{first_priority}}
