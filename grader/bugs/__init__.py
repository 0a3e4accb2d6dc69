"""The known-bug catalogue (declarative mutations of the reference) and the diagnosis that replays it."""
