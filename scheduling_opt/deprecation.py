"""Old public names kept for one release: a module ``__getattr__`` that warns.

A package renames a function (``placement.exact_arcflow`` is now
``placement.exact``) and keeps the old name working for one release: the
package's ``__getattr__ = deprecated_names(__name__, globals(), {...})``
returns the new object with a ``DeprecationWarning`` naming the new
name. Python calls a module's ``__getattr__`` only for names it does not
define, so the new names cost nothing. O(1) per lookup.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any


def deprecated_names(
    module: str, namespace: Mapping[str, Any], renamed: Mapping[str, str]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving each old name of ``renamed`` (old -> new) with a warning.

    Parameters
    ----------
    module : str
        The module's ``__name__`` (for the messages).
    namespace : mapping
        The module's ``globals()``, where the new names live.
    renamed : mapping of str to str
        Old name -> new name.

    Returns
    -------
    callable
        ``__getattr__(name)``: the new object for an old name (warning
        ``DeprecationWarning``), ``AttributeError`` for any other name.

    Examples
    --------
    >>> import warnings
    >>> getattr_ = deprecated_names("demo", {"new": 1}, {"old": "new"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = getattr_("old")
    >>> value, str(caught[0].message)
    (1, 'demo.old is deprecated and will be removed in the next release; use demo.new')
    """

    def module_getattr(name: str) -> Any:
        new = renamed.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} is deprecated and will be removed in the next release; "
            f"use {module}.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return namespace[new]

    return module_getattr
