DELETE FROM jobtable_runners WHERE id = :id
