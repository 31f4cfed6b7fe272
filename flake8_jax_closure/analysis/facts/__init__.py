"""Scope facts over the standard ``ast`` tree: where each name is bound, read and changed."""
