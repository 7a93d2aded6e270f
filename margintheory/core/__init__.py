"""Core objects: closed forms, problem objects, networks, results, constructions and the algebra they use."""
