"""The SQL store's shared body: one implementation per concern for SQLite and PostgreSQL."""
