"""The playground: a page in the browser that trains many seeds of a small network side by
side, for two initializers on the same seeds, on tinynet's compiled kernels::

    python -m tinynet.playground

It shows every seed's decision boundary framed by its outcome, the success rates with their
Wilson intervals, Fisher's test between the two, how the failed seeds failed, all loss curves,
and any one seed up close; the address holds the settings, and a study downloads as JSON or as
one HTML file that opens without a server.

Modules: :mod:`~tinynet.playground.form` (the fields, checked by the library),
:mod:`~tinynet.playground.payload` (a study as the page draws it),
:mod:`~tinynet.playground.worker` (the process that trains), :mod:`~tinynet.playground.server`
(the page and its JSON API), :mod:`~tinynet.playground.cli`; the page's own code is in
``static/``, one small script per part of the page.
"""

from .cli import main
from .form import DEFAULTS, MAX_SAMPLES, MAX_SEEDS, MAX_WORK, FormError, read_form
from .payload import study_payload
from .server import Playground, standalone_page

__all__ = ["main", "Playground", "read_form", "FormError", "study_payload", "standalone_page",
           "DEFAULTS", "MAX_SEEDS", "MAX_SAMPLES", "MAX_WORK"]
