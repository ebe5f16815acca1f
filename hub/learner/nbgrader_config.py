"""nbgrader configuration of every learner's server on the course hub (and of the instructor's exchange commands).

It names the course and the exchange root that the Assignment List fetches from and submits to.
The exchange root is a folder every user of the hub can write (``install -d -m 0777``), on a disk
that every single-user server sees (on several machines: an NFS mount at the same path). Its path
comes from the ``COURSE_EXCHANGE`` environment variable, which ``hub/jupyterhub_config.py`` gives
to every server it starts; nbgrader's default is ``/usr/local/share/nbgrader/exchange``.
"""
import os

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "context-engineering"
c.Exchange.root = os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")

# The exchange commands of the course: a broken notebook is refused before it is submitted, an
# assignment not released yet or an exchange root that cannot be used is named with its fix.
from ctx_course.exchange import use_course_exchange  # noqa: E402

use_course_exchange(c)
