"""Everything a member reads, rendered into the neutral message model, one module per thing
drawn: ``questions`` (a posted question and its answer buttons), ``answers`` (private feedback
after a click), ``reveals`` (the answer and the explanation thread), ``buttons`` (🚩, next,
stop), ``notices`` (one-line replies), ``stats`` and ``boards`` (progress as text) and
``charts`` (progress as PNG).

No decisions are made here: the functions receive facts computed elsewhere in the core.
Import from the module that draws what you need (``from bot.core.render.notices import
notice``).
"""

from __future__ import annotations
