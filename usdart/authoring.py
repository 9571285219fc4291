"""`usdart.authoring`: the schema-writing helpers (usdart.usd.authoring), at the top of the package."""

from .usd.authoring import *  # noqa: F403
from .usd.authoring import __all__  # noqa: F401
