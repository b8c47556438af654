"""The plain RQ program's job function (RQ imports it by name)."""


def nothing(_payload):
    return None
