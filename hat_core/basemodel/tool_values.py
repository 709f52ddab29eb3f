"""Value pools for the generic tool domains (English, Chinese) and small seeded helpers."""

from __future__ import annotations

import random

CITIES = (
    (
        "Paris",
        "Berlin",
        "Tokyo",
        "Oslo",
        "Lima",
        "Cairo",
        "Madrid",
        "Seoul",
        "Boston",
        "Dublin",
        "Nairobi",
        "Sydney",
        "Toronto",
        "Lisbon",
        "Prague",
        "Denver",
    ),
    (
        "北京",
        "上海",
        "杭州",
        "成都",
        "广州",
        "深圳",
        "西安",
        "南京",
        "武汉",
        "重庆",
        "苏州",
        "天津",
        "长沙",
        "青岛",
        "厦门",
        "昆明",
    ),
)
DAYS = (
    ("today", "tomorrow", "on Friday", "this weekend", "on Monday"),
    ("今天", "明天", "周五", "这个周末", "周一"),
)
CONDITIONS = (
    ("sunny", "light rain", "cloudy", "snow", "windy"),
    ("晴", "小雨", "多云", "雪", "大风"),
)
TITLES = (
    (
        "team sync",
        "dentist",
        "lunch with Amy",
        "project review",
        "yoga class",
        "call mom",
        "piano lesson",
    ),
    ("团队例会", "看牙医", "和小王吃午饭", "项目评审", "瑜伽课", "给妈妈打电话", "钢琴课"),
)
AUTHORS = (
    ("Jane Austen", "Mark Twain", "Agatha Christie", "Haruki Murakami", "Toni Morrison"),
    ("鲁迅", "老舍", "金庸", "余华", "莫言"),
)
BOOKS = (
    ("Emma", "Dune", "Beloved", "Persuasion", "Ulysses", "Middlemarch", "Kindred"),
    ("围城", "活着", "边城", "家", "骆驼祥子", "呐喊", "平凡的世界"),
)
SONGS = (
    ("Yellow", "Hello", "Imagine", "Dreams", "Heroes", "Vienna"),
    ("晴天", "稻香", "童话", "后来", "夜曲", "小幸运"),
)
ARTISTS = (
    ("Adele", "Coldplay", "Queen", "ABBA", "Bowie"),
    ("周杰伦", "王菲", "陈奕迅", "林俊杰", "邓紫棋"),
)
PHRASES = (
    ("good morning", "thank you", "see you tomorrow", "where is the station"),
    ("早上好", "谢谢你", "明天见", "车站在哪里"),
)
LANGS = (("French", "German", "Spanish", "Japanese"), ("法语", "德语", "西班牙语", "日语"))
LABELS = (
    ("tea", "pasta", "laundry", "a break", "homework"),
    ("泡茶", "煮面", "洗衣服", "休息", "写作业"),
)
DISHES = (
    ("pancakes", "fried rice", "tomato soup", "lasagna", "curry"),
    ("番茄炒蛋", "红烧肉", "饺子", "麻婆豆腐", "宫保鸡丁"),
)
UNITS = (
    (
        ("km", "miles", 0.6214),
        ("kg", "pounds", 2.2046),
        ("liters", "gallons", 0.2642),
        ("meters", "feet", 3.2808),
    ),
    (
        ("公里", "英里", 0.6214),
        ("千克", "磅", 2.2046),
        ("升", "加仑", 0.2642),
        ("米", "英尺", 3.2808),
    ),
)


def by_lang(pool: tuple, lang: str) -> tuple:
    return pool[0] if lang == "en" else pool[1]


def rand_date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def rand_time(rng: random.Random) -> str:
    return f"{rng.randint(7, 21):02d}:{rng.choice(('00', '15', '30', '45'))}"
