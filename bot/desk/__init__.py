"""The bot's desk, split into rooms by feature: the front desk (bot/desk/front.py) runs every
command declared in bot/desk/commands.py in its room (lobby, play, views, guide, moderation,
fairness, pacing, cards); the rooms share a `Context`, and each game family's replies come
from its presenter (bot/presenters/)."""

from bot.caller import Caller
from bot.desk.front import Desk

__all__ = ["Caller", "Desk"]
