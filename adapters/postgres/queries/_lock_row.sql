-- The row read is locked until commit.
FOR UPDATE
