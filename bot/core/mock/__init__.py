"""/mock: a timed mock interview (MCQs at the readiness edge, explain-it, one coding
challenge) ending in a report. ``tracks`` is data, ``session`` pure logic, ``desk`` the service,
``group`` the group mocks an admin schedules for a channel (posted through bot.core.posting)."""
