-- A queue's limits change only once every claim that read the queues before is over (each
-- holds a share lock on jobtable_queues until it commits): a claim that passed a queue's
-- jobs as unlimited has committed its claims, so the first limited claim counts them.
-- Claims wait the few milliseconds this transaction takes.
LOCK TABLE jobtable_queues IN ACCESS EXCLUSIVE MODE
