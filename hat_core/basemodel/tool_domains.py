"""The generic tool domains of the base-model corpus: weather, calendar, calculator, units,
trains, library, music, translation, timers and recipes. Never live-stream shopping: that is
what the HAT stages teach later.

A `ToolSpec` is a semantic tool (its surface names are drawn per sample by `names.py`): its
parameters with value pools, English and Chinese questions, and a seeded fake result.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from hat_core.basemodel.tool_values import (
    ARTISTS,
    AUTHORS,
    BOOKS,
    CITIES,
    CONDITIONS,
    DAYS,
    DISHES,
    LABELS,
    LANGS,
    PHRASES,
    SONGS,
    TITLES,
    UNITS,
    by_lang,
    rand_date,
    rand_time,
)

Values = dict[str, object]


@dataclass(frozen=True)
class Param:
    key: str
    synonyms: tuple[str, ...]
    type: str
    descs: tuple[str, ...]


@dataclass(frozen=True)
class ToolSpec:
    key: str
    nouns: tuple[str, ...]
    descs: tuple[str, ...]
    params: tuple[Param, ...]
    intent: tuple[str, str]
    ask: tuple[tuple[str, ...], tuple[str, ...]]
    sample: Callable[[random.Random, str], Values]
    result: Callable[[random.Random, Values, str], Values]
    reply: tuple[str, str]


def _pick(**pools: tuple) -> Callable[[random.Random, str], Values]:
    def sample(rng: random.Random, lang: str) -> Values:
        return {k: rng.choice(by_lang(p, lang)) for k, p in pools.items()}

    return sample


def _p(key: str, synonyms: str, type_: str, *descs: str) -> Param:
    return Param(key, tuple(synonyms.split(",")), type_, descs)


def _weather_result(rng, args, lang):
    low = rng.randint(-5, 20)
    return {
        "condition": rng.choice(by_lang(CONDITIONS, lang)),
        "low_c": low,
        "high_c": low + rng.randint(2, 12),
    }


def _calc_sample(rng, lang):
    a, b, op = rng.randint(2, 999), rng.randint(2, 99), rng.choice("+-*")
    return {"expression": f"{a} {op} {b}"}


def _calc_result(rng, args, lang):
    a, op, b = args["expression"].split()
    return {"result": {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op]}


def _units_sample(rng, lang):
    src, dst, _ = rng.choice(by_lang(UNITS, lang))
    return {"value": rng.randint(1, 500), "from_unit": src, "to_unit": dst}


def _units_result(rng, args, lang):
    factor = next(f for s, d, f in UNITS[0] + UNITS[1] if s == args["from_unit"])
    return {"result": round(args["value"] * factor, 2)}


def _train_sample(rng, lang):
    a, b = rng.sample(by_lang(CITIES, lang), 2)
    return {"origin": a, "destination": b, "date": rand_date(rng)}


def _train_result(rng, args, lang):
    n = rng.randint(1, 9)
    return {
        "count": n,
        "first_train": f"{rng.choice('GDKZ')}{rng.randint(10, 999)}",
        "departs": rand_time(rng),
    }


def _event_sample(rng, lang):
    return {
        "title": rng.choice(by_lang(TITLES, lang)),
        "date": rand_date(rng),
        "time": rand_time(rng),
    }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "weather_forecast",
        ("weather", "forecast", "weather forecast", "weather report"),
        ("weather forecast", "forecast for a city", "get weather", "daily weather"),
        (
            _p("city", "city,location,place,town,city name", "string", "city", "city name"),
            _p("day", "day,date,when,day name", "string", "which day", "day"),
        ),
        ("the weather forecast", "查天气"),
        (
            (
                "What's the weather in {city} {day}?",
                "Will it rain in {city} {day}?",
                "Weather for {city} {day}, please.",
                "how is the weather {day} in {city}",
            ),
            (
                "{city}{day}天气怎么样？",
                "{day}{city}会下雨吗？",
                "查一下{city}{day}的天气",
                "{city}{day}冷不冷？",
            ),
        ),
        _pick(city=CITIES, day=DAYS),
        _weather_result,
        (
            "{city} {day}: {condition}, {low_c} to {high_c} °C.",
            "{city}{day}{condition}，气温{low_c}到{high_c}度。",
        ),
    ),
    ToolSpec(
        "air_quality",
        ("air quality", "aqi", "pollution", "air index"),
        ("air quality index", "AQI of a city", "pollution level"),
        (_p("city", "city,location,town,area", "string", "city", "where"),),
        ("the air quality", "查空气质量"),
        (
            ("How is the air quality in {city}?", "What's the AQI in {city} right now?"),
            ("{city}的空气质量怎么样？", "现在{city}的AQI是多少？"),
        ),
        _pick(city=CITIES),
        lambda rng, args, lang: {"aqi": rng.randint(10, 300)},
        ("The AQI in {city} is {aqi}.", "{city}的空气质量指数是{aqi}。"),
    ),
    ToolSpec(
        "create_event",
        ("event", "calendar event", "meeting", "appointment", "calendar entry"),
        ("add calendar event", "create an event", "schedule a meeting", "new appointment"),
        (
            _p("title", "title,name,subject,event name", "string", "event title", "what"),
            _p("date", "date,day,event date,on date", "string", "date YYYY-MM-DD", "day"),
            _p("time", "time,start,start time,at", "string", "start time HH:MM", "time"),
        ),
        ("to add an event to the calendar", "添加日程"),
        (
            (
                "Add '{title}' to my calendar on {date} at {time}.",
                "Schedule {title} for {date} at {time}.",
                "please put {title} on {date}, {time}",
            ),
            (
                "帮我在{date} {time}添加一个日程：{title}。",
                "{date} {time}安排{title}",
                "把{title}加到日历，{date} {time}",
            ),
        ),
        _event_sample,
        lambda rng, args, lang: {"event_id": f"EV{rng.randint(1000, 9999)}", "status": "created"},
        (
            "Done: '{title}' is on {date} at {time} (id {event_id}).",
            "已添加日程“{title}”，时间{date} {time}，编号{event_id}。",
        ),
    ),
    ToolSpec(
        "list_events",
        ("events", "schedule", "agenda", "calendar"),
        ("list events of a day", "show the agenda", "calendar for a date"),
        (_p("date", "date,day,on date,when", "string", "date YYYY-MM-DD", "day"),),
        ("to see the calendar", "查看日程"),
        (
            ("What's on my calendar on {date}?", "Do I have anything on {date}?"),
            ("我{date}有什么安排？", "看看{date}的日程"),
        ),
        lambda rng, lang: {"date": rand_date(rng)},
        lambda rng, args, lang: {
            "events": rng.randint(0, 5),
            "first": rng.choice(by_lang(TITLES, lang)),
        },
        (
            "You have {events} events on {date}; the first is {first}.",
            "你{date}有{events}个日程，第一个是{first}。",
        ),
    ),
    ToolSpec(
        "calculate",
        ("calculator", "math", "expression", "arithmetic", "sum"),
        ("evaluate a math expression", "calculator", "do arithmetic"),
        (_p("expression", "expression,expr,formula,input,query", "string", "math expression"),),
        ("a calculation", "计算"),
        (
            ("What is {expression}?", "Calculate {expression}.", "{expression} = ?"),
            ("帮我算一下{expression}。", "{expression}等于多少？", "计算{expression}"),
        ),
        _calc_sample,
        _calc_result,
        ("{expression} = {result}.", "{expression}的结果是{result}。"),
    ),
    ToolSpec(
        "convert_units",
        ("unit converter", "conversion", "units", "unit", "measure"),
        ("convert between units", "unit conversion", "change units"),
        (
            _p("value", "value,amount,number,quantity,qty", "number", "amount", "value"),
            _p("from_unit", "from unit,source unit,from,unit in", "string", "source unit"),
            _p("to_unit", "to unit,target unit,to,unit out", "string", "target unit"),
        ),
        ("a unit conversion", "换算单位"),
        (
            (
                "Convert {value} {from_unit} to {to_unit}.",
                "How many {to_unit} is {value} {from_unit}?",
            ),
            ("{value}{from_unit}等于多少{to_unit}？", "把{value}{from_unit}换算成{to_unit}"),
        ),
        _units_sample,
        _units_result,
        (
            "{value} {from_unit} is {result} {to_unit}.",
            "{value}{from_unit}约等于{result}{to_unit}。",
        ),
    ),
    ToolSpec(
        "search_trains",
        ("train tickets", "trains", "rail tickets", "train schedule", "rail"),
        ("search train tickets", "find trains", "rail timetable"),
        (
            _p("origin", "origin,from city,departure,start,from station", "string", "from city"),
            _p("destination", "destination,to city,arrival,dest,to station", "string", "to city"),
            _p("date", "date,travel date,day,depart date", "string", "date YYYY-MM-DD"),
        ),
        ("train tickets", "查火车票"),
        (
            (
                "Find trains from {origin} to {destination} on {date}.",
                "Any train tickets {origin} -> {destination} for {date}?",
            ),
            (
                "查一下{date}从{origin}到{destination}的火车票。",
                "{date}{origin}去{destination}有车吗？",
            ),
        ),
        _train_sample,
        _train_result,
        (
            "{count} trains from {origin} to {destination} on {date}; "
            "first {first_train} at {departs}.",
            "{date}从{origin}到{destination}有{count}趟车，最早{first_train}次{departs}出发。",
        ),
    ),
    ToolSpec(
        "search_books",
        ("books", "library catalog", "book search", "library", "catalog"),
        ("search the library", "find books by author", "library catalog"),
        (_p("author", "author,writer,author name,by", "string", "author name"),),
        ("to find books in the library", "查图书馆藏书"),
        (
            ("Does the library have books by {author}?", "Find books by {author}."),
            ("图书馆有{author}的书吗？", "帮我找{author}写的书"),
        ),
        _pick(author=AUTHORS),
        lambda rng, args, lang: {
            "count": rng.randint(1, 12),
            "first": rng.choice(by_lang(BOOKS, lang)),
        },
        (
            "The library has {count} books by {author}, e.g. {first}.",
            "图书馆有{count}本{author}的书，比如《{first}》。",
        ),
    ),
    ToolSpec(
        "renew_loan",
        ("book loan", "renewal", "loan", "library loan", "borrowing"),
        ("renew a borrowed book", "extend a loan"),
        (
            _p("book", "book,title,book title,book name", "string", "book title"),
            _p("weeks", "weeks,duration,period,num weeks", "integer", "weeks", "how long"),
        ),
        ("to renew a book", "续借图书"),
        (
            (
                "Please renew {book} for {weeks} weeks.",
                "Can you extend my loan of {book} by {weeks} weeks?",
            ),
            ("帮我把《{book}》续借{weeks}周。", "《{book}》再借{weeks}周"),
        ),
        lambda rng, lang: {"book": rng.choice(by_lang(BOOKS, lang)), "weeks": rng.randint(1, 4)},
        lambda rng, args, lang: {"due_date": rand_date(rng), "status": "renewed"},
        ("{book} is renewed; it is due on {due_date}.", "《{book}》已续借，到期日{due_date}。"),
    ),
    ToolSpec(
        "play_song",
        ("song", "music", "track", "player", "playback"),
        ("play a song", "start music", "play track"),
        (
            _p("song", "song,track,title,song name", "string", "song title"),
            _p("artist", "artist,singer,band,performer", "string", "artist"),
        ),
        ("to play music", "播放音乐"),
        (
            ("Play {song} by {artist}.", "put on {artist}, the song {song}"),
            ("播放{artist}的{song}。", "我想听{artist}的{song}"),
        ),
        _pick(song=SONGS, artist=ARTISTS),
        lambda rng, args, lang: {"status": "playing"},
        ("Now playing {song} by {artist}.", "正在播放{artist}的《{song}》。"),
    ),
    ToolSpec(
        "set_volume",
        ("volume", "sound level", "speaker volume", "loudness"),
        ("set speaker volume", "change the volume"),
        (_p("level", "level,volume,percent,value", "integer", "0-100"),),
        ("to change the volume", "调音量"),
        (
            ("Set the volume to {level}.", "volume {level} please"),
            ("把音量调到{level}。", "音量设成{level}"),
        ),
        lambda rng, lang: {"level": rng.randint(0, 100)},
        lambda rng, args, lang: {"volume": args["level"]},
        ("Volume set to {volume}.", "音量已调到{volume}。"),
    ),
    ToolSpec(
        "translate",
        ("translation", "translator", "text translation", "translate text"),
        ("translate text", "translation between languages"),
        (
            _p("text", "text,phrase,source text,content", "string", "text"),
            _p("target", "target language,target,language,lang", "string", "target language"),
        ),
        ("a translation", "翻译"),
        (
            ("Translate '{text}' into {target}.", "How do you say '{text}' in {target}?"),
            ("把“{text}”翻译成{target}。", "“{text}”用{target}怎么说？"),
        ),
        _pick(text=PHRASES, target=LANGS),
        lambda rng, args, lang: {"translation": f"[{args['target']}] {args['text']}"},
        ("In {target}: {translation}", "{target}是：{translation}"),
    ),
    ToolSpec(
        "set_timer",
        ("timer", "alarm", "countdown", "reminder"),
        ("start a timer", "countdown timer", "set an alarm"),
        (
            _p("minutes", "minutes,duration,mins,length", "integer", "minutes"),
            _p("label", "label,name,note,tag", "string", "label"),
        ),
        ("a timer", "设置计时器"),
        (
            ("Set a {minutes}-minute timer for {label}.", "timer {minutes} min, {label}"),
            ("设一个{minutes}分钟的计时器，提醒{label}。", "{minutes}分钟后提醒我{label}"),
        ),
        lambda rng, lang: {
            "minutes": rng.randint(1, 90),
            "label": rng.choice(by_lang(LABELS, lang)),
        },
        lambda rng, args, lang: {"timer_id": f"T{rng.randint(100, 999)}", "status": "running"},
        (
            "Timer {timer_id} runs for {minutes} minutes ({label}).",
            "已设置{minutes}分钟计时器（{label}），编号{timer_id}。",
        ),
    ),
    ToolSpec(
        "find_recipe",
        ("recipe", "recipes", "cooking recipe", "dish", "cookbook"),
        ("find a recipe", "cooking instructions", "recipe search"),
        (
            _p("dish", "dish,meal,recipe name,food", "string", "dish"),
            _p("servings", "servings,people,portions,serves", "integer", "servings"),
        ),
        ("a recipe", "找菜谱"),
        (
            (
                "Find a recipe for {dish} for {servings} people.",
                "How do I cook {dish}? {servings} servings.",
            ),
            ("找一个{servings}人份的{dish}做法。", "{dish}怎么做？{servings}个人吃"),
        ),
        lambda rng, lang: {
            "dish": rng.choice(by_lang(DISHES, lang)),
            "servings": rng.randint(1, 8),
        },
        lambda rng, args, lang: {"minutes": rng.randint(10, 120), "steps": rng.randint(3, 9)},
        (
            "{dish} for {servings}: {steps} steps, about {minutes} minutes.",
            "{servings}人份{dish}：共{steps}步，约{minutes}分钟。",
        ),
    ),
)
