"""`muh lsp`: editor support over the Language Server Protocol.

``analysis`` runs muh's pipeline over a buffer, ``context`` reads what may be typed at a cursor,
``features`` answers hover / definition / completion / symbols / fixes / formatting in muh's
coordinates, and ``server`` (pygls) translates all of it to and from the protocol.
"""
