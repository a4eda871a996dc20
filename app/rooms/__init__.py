"""Rooms: a presenter's live session that a lecture hall follows (issue 12).

`models` (the documents), `codes` (join codes, tokens), `polls` (the question at a
frame), `store` (what a backend provides) with `memory` and `redis_store`, and `service`
(the rules over either backend). The routes are app/web/rooms.py.
"""
