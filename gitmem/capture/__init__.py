"""Session capture: reading what an agent's session said, proposing what to keep.

Pure input-to-proposal logic: ``transcript`` reads an agent's session file into
events, ``rules`` is the built-in extractor (no model), ``runner`` runs the
user's own model command (the one module that starts it), ``classify`` guesses
a proposal's kind. Nothing here touches git or SQLite; ``api.capture`` screens
the candidates and files them in the inbox.
"""
