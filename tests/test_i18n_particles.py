"""Korean particles after a value (kafkasim.course.i18n.particle and tr's particle specs): the
form agrees with how the value is read aloud, for numbers, Hangul and Latin words."""
import pytest

from kafkasim.course import i18n


@pytest.mark.parametrize("text, topic, subject, object_, direction", [
    ("3", "은", "이", "을", "으로"),      # 삼
    ("2", "는", "가", "를", "로"),        # 이
    ("47", "은", "이", "을", "로"),       # 사십칠: ㄹ takes 로
    ("45", "는", "가", "를", "로"),       # 사십오
    ("6", "은", "이", "을", "으로"),      # 육
    ("10", "은", "이", "을", "으로"),     # 십
    ("100", "은", "이", "을", "으로"),    # 백
    ("1000", "은", "이", "을", "으로"),   # 천
    ("0", "은", "이", "을", "으로"),      # 영
    ("2.0", "은", "이", "을", "으로"),    # 이 점 영
    ("2.5", "는", "가", "를", "로"),      # 이 점 오
    ("t=1", "은", "이", "을", "로"),      # 일
    ("브로커", "는", "가", "를", "로"),
    ("컨슈머 그룹", "은", "이", "을", "으로"),
    ("레코드 7개", "는", "가", "를", "로"),
    ("파일", "은", "이", "을", "로"),
    ("ISR", "은", "이", "을", "로"),      # 아이에스알
    ("LEO", "는", "가", "를", "로"),      # 엘이오
    ("HW", "는", "가", "를", "로"),       # 에이치더블유
    ("leader", "는", "가", "를", "로"),
    ("commit", "은", "이", "을", "으로"),
    ("'topic-a'", "는", "가", "를", "로"),
    ("[1, 2, 3]", "은", "이", "을", "으로"),
])
def test_the_particle_follows_the_reading(text, topic, subject, object_, direction):
    assert i18n.particle(text, "는") == i18n.particle(text, "은") == topic
    assert i18n.particle(text, "가") == subject
    assert i18n.particle(text, "을") == object_
    assert i18n.particle(text, "로") == i18n.particle(text, "으로") == direction


def test_an_unreadable_value_gets_both_forms():
    assert i18n.particle("", "는") == "은(는)"
    assert i18n.particle("%", "가") == "이(가)"


def test_tr_writes_the_particle_the_value_takes():
    fmt = i18n._FORMATTER.vformat
    assert fmt("브로커 {b:는} 리더입니다", (), {"b": 3}) == "브로커 3은 리더입니다"
    assert fmt("브로커 {b:는} 리더입니다", (), {"b": 2}) == "브로커 2는 리더입니다"
    assert fmt("오프셋 {n:을} 읽습니다", (), {"n": 47}) == "오프셋 47을 읽습니다"
    assert fmt("오프셋 {n:을} 읽습니다", (), {"n": 45}) == "오프셋 45를 읽습니다"
    assert fmt("{t:.1f:로} 바꿉니다", (), {"t": 2.0}) == "2.0으로 바꿉니다"
    assert fmt("{a!r:이} 아닙니다", (), {"a": "x"}) == "'x'가 아닙니다"
    assert fmt("{n:>3}", (), {"n": 7}) == "  7"          # an ordinary spec is unchanged


def test_split_particle_keeps_ordinary_specs():
    assert i18n.split_particle("는") == ("", "는")
    assert i18n.split_particle(".1f:로") == (".1f", "로")
    assert i18n.split_particle(".1f") == (".1f", None)
    assert i18n.split_particle("") == ("", None)


def test_no_runtime_message_puts_a_fixed_particle_after_a_value():
    """kafkasim/course/locale/ko.po: a particle right after a field is the field's spec ("{b:는}"),
    never fixed text ("{b}는" prints "47는") nor both forms ("{b}은(는)")."""
    import re
    import string

    import polib

    po = polib.pofile(str(i18n.LOCALE / "ko.po"), wrapwidth=0)
    forms = sorted((form for pair in i18n.PARTICLES for form in pair), key=len, reverse=True)
    fixed = re.compile(r"\{[A-Za-z_][^{}]*\}(?:" + "|".join(forms) + r")(?![가-힣])")
    bad = []
    for entry in po:
        if entry.obsolete or "{" not in entry.msgid:
            continue
        try:
            list(string.Formatter().parse(entry.msgid))
        except ValueError:
            continue                    # not a template: printed as it is
        bad += [m.group(0) for m in fixed.finditer(entry.msgstr)]
    assert bad == []
