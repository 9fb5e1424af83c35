"""The dashboard at /ui/: server-rendered pages, a little script of our own, a session cookie."""
