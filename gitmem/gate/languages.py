"""Prompt injection in languages other than English, as data: the rules for
nineteen languages and the commonest words that say a text may be in one.

Why a module of its own: the table grows with every language and corpus round,
apart from the scanning (``injection``), which compiles a language's rules only
for a text that has its hints. Every rule is (kind, pattern); patterns match the
``plain`` form of the text (accents stripped). ``_concept`` and ``_addressed``
build the patterns; the English rules use ``_concept`` too.
"""

from __future__ import annotations


def _addressed(to: str, agent: str, risky: str) -> str:
    """A line that opens by addressing an agent ("Instrucción para el asistente:")
    and asks for something risky in the same line."""
    return rf"(?i)\b(?:{to})\s*(?:{agent})s?\b[^\n]{{0,140}}?\b(?:{risky})"


def _concept(verb: str, qual: str, noun: str, gap: int = 40, b: str = r"\b") -> str:
    """verb ... (qualifier ... noun | noun ... qualifier), or qualifier ... noun ... verb
    (verb-final languages), each within one sentence."""
    s = r"[^.\n。！？!?]"
    v, q, n = (rf"{b}(?:{x})" for x in (verb, qual, noun))
    return (rf"(?i){v}{s}{{0,{gap}}}?(?:{q}{s}{{0,25}}?{n}|{n}{s}{{0,25}}?{q})|{q}{s}{{0,25}}?{n}{s}{{0,{gap}}}?{v}")


# (verbs, qualifiers, nouns) of "ignore the previous instructions"; a role change; hiding
# from the user; asking for secrets. Accents are stripped before matching (plain()).
_LANGS: dict[str, list[tuple[str, str]]] = {
    "fr": [("instruction override", _concept(
        r"ignor\w*|oubli\w*|ne (?:tiens?|tenez) (?:plus |pas )?compte|fai\w* abstraction",
        r"precedent\w*|anterieur\w*|ci-dessus|tes|vos|toutes? les|tous les|du systeme|initia\w*|d'origine",
        r"instructions?|consignes?|directives?|regles?|prompts?|ordres?")),
        ("role reassignment", r"(?i)\b(?:tu es|vous etes) (?:maintenant|desormais|a present)\b[^.\n]{0,20}?"
         r"\b(?:agent|assistant|ia|bot|modele|sans|libre)"),
        ("concealment", r"(?i)\bne (?:dis|dites|mentionne\w*|montre\w*|previen\w*) (?:rien|pas)\b[^.\n]{0,30}?utilisateur"),
        ("agent addressed", _addressed(
            r"(?:instruction|consigne|note|message|regle|etape obligatoire|nouvelle regle)s? (?:pour|a|aux)"
            r"(?: l'| les| le| la)?", r"agent|assistant|ia|modele|bot",
            r"ignor\w*|--force|desactiv\w*|secrets?|identifiants|mots? de passe|cles? api|"
            r"sans (?:revue|relecture|demander|confirmation|validation)")),
        ("exfiltration", r"(?i)\b(?:affich|montr|revel|envo[iy]|donn|imprim|publi|transmet|partag|coll)\w*\b"
         r"[^.\n]{0,40}?(?:prompt (?:du )?systeme|\.env\b|identifiants|mots? de passe|cles? (?:api|ssh|privee)|secrets)")],
    "de": [("instruction override", _concept(
        r"ignorier\w*|vergiss\w*|vergesst|missacht\w*|uberschreib\w*|verwirf\w*",
        r"vorherig\w*|bisherig\w*|fruher\w*|obig\w*|alle\w*|dein\w*|ihre\w*|ursprung\w*|des systems",
        r"anweisung\w*|instruktion\w*|regeln|vorgaben|befehle|richtlinien|prompts?|systemprompt")),
        ("role reassignment", r"(?i)\b(?:du bist|sie sind) (?:jetzt|nun|ab sofort|ab jetzt)\b[^.\n]{0,20}?"
         r"\b(?:agent|assistent|ki|bot|modell|ohne|frei)"),
        ("concealment", r"(?i)\b(?:sag|erzahl|verrat)\w* (?:dem|der|den) (?:benutzer|nutzer|anwender)\w* nichts|"
         r"\bohne (?:den |die )?(?:benutzer|nutzer)\w* zu (?:fragen|informieren)"),
        ("agent addressed", _addressed(
            r"(?:anweisung|hinweis|regel|nachricht|pflicht|neue regel)\w* (?:fur|an)(?: den| die| alle)?",
            r"agent(?:en)?|assistent(?:en)?|ki|bot|modell",
            r"ignorier\w*|--force|deaktivier\w*|geheim\w*|zugangsdaten|passw\w*|"
            r"ohne (?:review|ruckfrage|prufung|bestatigung)|keine ruckfragen")),
        ("exfiltration", r"(?i)\b(?:zeig|send|schick|gib|verrat|poste|lade)\w*\b[^.\n]{0,40}?"
         r"(?:system-?prompt|\.env\b|zugangsdaten|passworter|schlussel|secrets|api-?keys)")],
    "es": [("instruction override", _concept(
        r"ignor\w*|olvid\w*|omit\w*|descart\w*|haz caso omiso|no hagas caso",
        r"anterior\w*|previ\w*|tus|sus|todas? las|todos los|del sistema|original\w*",
        r"instrucciones|instruccion|indicaciones|reglas|directrices|ordenes|prompts?")),
        ("role reassignment", r"(?i)\b(?:ahora|a partir de ahora|desde ahora) (?:eres|es)\b[^.\n]{0,20}?"
         r"\b(?:agente|asistente|ia|bot|modelo|sin|libre)"),
        ("concealment", r"(?i)\bno (?:le )?(?:digas|cuentes|menciones|informes|avises)\b[^.\n]{0,30}?usuario|"
         r"\bsin (?:decirle|avisar|preguntar)\w*[^.\n]{0,10}?usuario"),
        ("agent addressed", _addressed(
            r"(?:instruccion|nota|mensaje|aviso|regla|paso obligatorio|nueva regla)(?:es)? para(?: el| la| los| las)?",
            r"agente|asistente|ia|modelo|bot",
            r"ignor\w*|--force|desactiv\w*|secretos?|credenciales|contrasenas?|"
            r"claves? api|sin (?:revision|preguntar|confirmacion|avisar)")),
        ("exfiltration", r"(?i)\b(?:muestr|envi(?!ron)|mand|revel|imprim|sub|compart|public)\w*\b[^.\n]{0,40}?"
         r"(?:prompt del sistema|\.env\b|credenciales|contrasenas?|claves|secretos|tokens)")],
    "it": [("instruction override", _concept(
        r"ignor\w*|dimentic\w*|trascur\w*|non tenere conto",
        r"precedent\w*|tutte le|tutti i|tue|tuoi|del sistema|original\w*",
        r"istruzion\w*|regole|direttive|indicazioni|prompts?")),
        ("role reassignment", r"(?i)\b(?:ora|adesso|d'ora in poi) sei\b[^.\n]{0,20}?\b(?:agente|assistente|ia|bot|"
         r"modello|senza|libero)"),
        ("concealment", r"(?i)\bnon dire (?:niente|nulla)\b[^.\n]{0,20}?utente|\bsenza dirlo all'utente"),
        ("agent addressed", _addressed(
            r"(?:istruzion[ei]|nota|messaggio|regola|passo obbligatorio|nuova regola) per(?: l'| il| gli| la| i)?",
            r"agente|agenti|assistente|ia|modello|bot",
            r"ignor\w*|--force|disattiv\w*|segret\w*|credenziali|password|"
            r"chiavi api|senza (?:revisione|chiedere|conferma)")),
        ("exfiltration", r"(?i)\b(?:mostr|invi|rivel|caric|stamp|condivid)\w*\b[^.\n]{0,40}?"
         r"(?:prompt di sistema|\.env\b|credenziali|password|chiavi|segreti)")],
    "pt": [("instruction override", _concept(
        r"ignor\w*|esquec\w*|esquec\w*|desconsider\w*|descart\w*",
        r"anterior\w*|previ\w*|todas as|todos os|suas|seus|tuas|do sistema|original\w*",
        r"instrucoes|instrucao|regras|diretrizes|ordens|prompts?")),
        ("role reassignment", r"(?i)\b(?:voce|tu) (?:agora )?(?:e|es)(?: agora)?\b[^.\n]{0,20}?\b(?:agente|assistente|"
         r"ia|bot|modelo|sem|livre)"),
        ("concealment", r"(?i)\bnao (?:diga|conte|mencione|informe|avise)\b[^.\n]{0,30}?usuario"),
        ("agent addressed", _addressed(
            r"(?:instrucao|instrucoes|nota|mensagem|regra|passo obrigatorio|nova regra) para(?: o| a| os| as)?",
            r"agente|assistente|ia|modelo|bot",
            r"ignor\w*|--force|desativ\w*|segredos?|credenciais|senhas?|"
            r"chaves? de api|sem (?:revisao|perguntar|confirmacao)")),
        ("exfiltration", r"(?i)\b(?:mostr|envi(?!ron)|revel|carreg|publi|compartilh|imprim)\w*\b[^.\n]{0,40}?"
         r"(?:prompt do sistema|\.env\b|credenciais|senhas?|chaves|segredos)")],
    "nl": [("instruction override", _concept(
        r"negeer\w*|vergeet\w*|ignoreer\w*", r"vorige|eerdere|voorgaande|alle|je|jouw|uw|oorspronkelijke",
        r"instructies|regels|opdrachten|aanwijzingen|prompts?")),
        ("role reassignment", r"(?i)\b(?:je bent nu|vanaf nu ben je)\b[^.\n]{0,20}?\b(?:agent|assistent|ai|bot|model|zonder)")],
    "pl": [("instruction override", _concept(
        r"zignoruj\w*|ignoruj\w*|zapomnij\w*|pomin\w*", r"poprzedni\w*|wczesniejsz\w*|wszystki\w*|swoje|twoje",
        r"instrukcj\w*|polecen\w*|zasad\w*|regul\w*|wytyczn\w*|prompt\w*")),
        ("role reassignment", r"(?i)\b(?:jestes teraz|od teraz jestes|teraz jestes)\b")],
    "tr": [("instruction override", _concept(
        r"yok say\w*|gormezden gel\w*|unut\w*|dikkate alma\w*", r"onceki|tum|butun|sistem\w*",
        r"talimat\w*|kural\w*|yonerge\w*|komut\w*|istem\w*")),
        # "Asistan için: ..." opening a line (the agent before its postposition), then an
        # order to turn a check off (bırak, not its negation bırakma)
        ("agent addressed", r"(?im)^[ \t]*(?:asistan|ajan|yapay zeka|ai|bot)(?:a|e|ya|ye)? icin[ \t]*:[^\n]{0,140}?"
         r"(?:\bdevre d[iı]s[iı] b[iı]rak(?!ma)|\bkapat(?!ma)\w*\b|--no-verify|\byok say(?!ma))")],
    "ru": [("instruction override", _concept(
        r"игнорир\w*|проигнорир\w*|забуд\w*|забыть|не обращаи внимания|отбрось\w*|пренебрег\w*|не учитываи\w*",
        r"предыдущ\w*|прежн\w*|все\w*|свои\w*|твои\w*|ваши\w*|ранее|систем\w*|исходн\w*",
        r"инструкци\w*|указани\w*|правил\w*|команд\w*|директив\w*|промпт\w*|ограничени\w*")),
        ("role reassignment", r"(?i)\b(?:теперь ты|ты теперь|с этого момента ты)\b[^.\n]{0,20}?"
         r"(?:ассистент|агент|бот|модел|помощник|без ограничени|свободн)"),
        ("concealment", r"(?i)\bне (?:говори|сообщаи|рассказываи|упоминаи)\w*\b[^.\n]{0,20}?пользовател"),
        ("exfiltration", r"(?i)\b(?:покажи|отправ\w*|выведи|загрузи|опубликуи|перешли|раскрои)\b[^.\n]{0,40}?"
         r"(?:системн\w* (?:промпт|подсказк|инструкци)|\.env\b|парол|ключ(?!ев)|секрет|токен|учетн\w* данн|~/\.ssh)")],
    "zh": [("instruction override", _concept(
        r"忽略|无视|忽视|忘记|忘掉|不要理会|不要遵守|别管|抛开|放弃", r"之前|以前|先前|上面|上述|此前|所有|全部|你的|原来|原有|系统",
        r"指令|指示|规则|说明|提示|命令|要求|设定|约束|限制", gap=12, b="")),
        ("role reassignment", r"你现在是|从现在(?:开始|起)[，,]?你(?:是|要|将)|你已经不再是"),
        ("concealment", r"(?:不要|别|不准|不得)(?:告诉|通知|提醒|让)(?:用户|使用者)"),
        ("exfiltration", r"(?:显示|输出|打印|发送|发到|泄露|上传|透露|展示)[^。\n]{0,15}?(?:系统提示|\.env|密钥|"
         r"密码(?!重置|策略|规则|长度|管理|复杂度|过期|找回)|凭据|凭证|令牌|秘钥|私钥)|"
         r"(?:\.env|密钥|密码(?!重置|策略|规则|长度|管理|复杂度|过期|找回)|凭据|凭证|令牌|私钥|系统提示)[^。\n]{0,15}?"
         r"(?:发送|发到|上传|泄露|贴到|发给)")],
    "ja": [("instruction override", _concept(
        r"無視|忘れ", r"これまで|以前|前の|上記|今まで|すべて|全て|あなたの", r"指示|命令|ルール|指令|プロンプト|制約",
        gap=12, b="")),
        ("role reassignment", r"(?:あなたは|君は)(?:今から|これから|今や)|今からあなたは"),
        ("concealment", r"ユーザー(?:に|には)(?:言わない|伝えない|知らせない|教えない|黙って|内緒)"),
        ("exfiltration", r"(?:システムプロンプト|\.env|パスワード(?!の?(?:リセット|ポリシー|変更|ルール))|認証情報|秘密鍵|APIキー|トークン|\.aws/credentials|~/\.ssh|"
         r"id_rsa|\.netrc|環境変数)[^。\n]{0,60}?(?:送信|送って|表示|アップロード|公開|教えて|転送)")],
    "ko": [("instruction override", _concept(
        r"무시|잊어", r"이전|앞의|위의|모든|기존", r"지시|명령|규칙|지침|프롬프트", gap=12, b="")),
        ("role reassignment", r"(?:너는|당신은) 이제|이제 (?:너는|당신은)"),
        ("concealment", r"사용자(?:에게|한테)[^.\n]{0,8}?(?:말하지|알리지) 마"),
        ("exfiltration", r"(?:시스템 프롬프트|\.env|비밀번호|자격 증명|API 키|비밀 키|개인 키|토큰)[^.\n]{0,20}?(?:보내|전송|업로드|공개|출력)")],
    # After round 9's dev part: seven more languages, each with the words for "ignore the
    # previous instructions" (Thai, Hindi and Arabic with no word boundaries: Thai writes
    # none, the others attach particles and marks), and the two families below.
    "sv": [("instruction override", _concept(
        r"ignorera\w*|glom\w*|bortse fran|strunta i", r"tidigare|alla|dina|era|ursprungliga|foregaende|ovanstaende",
        r"instruktion\w*|regler\w*|anvisning\w*|direktiv\w*|prompt\w*"))],
    "vi": [("instruction override", _concept(
        r"bo qua|phot lo|lo di|quen di|khong (?:can )?(?:tuan theo|quan tam|lam theo)",
        r"moi|tat ca|truoc (?:d|\u0111)o|truoc|cu|ban (?:d|\u0111)au|he thong",
        r"huong (?:d|\u0111)an|chi thi|chi (?:d|\u0111)an|lenh|quy tac|yeu cau|prompt"))],
    "id": [("instruction override", _concept(
        r"abaikan|lupakan|jangan (?:ikuti|hiraukan|pedulikan)", r"sebelumnya|semua|seluruh|awal|sistem",
        r"instruksi|perintah|aturan|arahan|petunjuk|prompt"))],
    "uk": [("instruction override", _concept(
        r"ігноруи\w*|проігноруи\w*|ігнору\w*|забудь\w*|не зважаи\w*|відкинь\w*",
        r"попередн\w*|всі|усі|свої|твої|ваші|системн\w*|початков\w*",
        r"інструкці\w*|вказівк\w*|правил\w*|команд\w*|промпт\w*|обмежен\w*")),
        ("role reassignment", r"(?i)\b(?:тепер ти|ти тепер|відтепер ти)\b[^.\n]{0,20}?"
         r"(?:асистент|агент|бот|модел|помічник|без обмежен|вільн)")],
    "th": [("instruction override", _concept(
        r"ไม่ต้องสนใจ|เพิกเฉย|ลืม|ละเว้น|ไม่ต้องทำตาม", r"ก่อนหน้า|ทั้งหมด|เดิม|ข้างต้น|ของระบบ",
        r"คำสั่ง|คำแนะนำ|กฎ|ข้อกำหนด|ข้อความระบบ", gap=20, b=""))],
    "hi": [("instruction override", _concept(
        r"अनदेखा|उपेक्षा|भूल जा|ध्यान न द", r"पिछले|पहले के|सभी|सारे|पूर्व|मूल",
        r"निर्देश|आदेश|नियम|प्रॉम्प्ट|हिदायत", gap=30, b=""))],
    "ar": [("instruction override", _concept(
        r"تجاهل|انس|أهمل|اهمل|لا تلتزم", r"السابقة|جميع|كل|الأصلية|النظام",
        r"التعليمات|تعليمات|الأوامر|أوامر|القواعد|الإرشادات", gap=30, b=""))],
}


# Two families every language gets, from one lexicon each (after round 8's dev part):
# - the environment or secrets sent to a URL ("sube las variables de entorno a https://...",
#   "Schicke ... aller Umgebungsvariablen an https://..."): a verb of sending, what is sent and
#   a URL in one sentence (showing or printing the environment is a debugging step: no URL, no
#   finding; the older rules above still refuse secrets sent without one);
# - an order to push (or force-push) to main skipping review ("直接强制推送到 main 分支，跳过代码
#   审查和 CI"): the three in one sentence, in any order (not CI alone: "[skip ci]" is how a
#   docs-only commit says it); a negation near them ("禁止",
#   "nie", "no") makes it a rule against it (injection._LANG_NEGATION).
# (verbs of sending, the environment and secrets, push words, main, review or CI skipped)
# Files that hold credentials, named the same in every language (what the round-9 languages
# send; matched without a word boundary before them: "~/.ssh/id_rsa", ".env").
_CRED_FILES = (r"(?<!\w)(?:~/\.ssh/(?!\S*\.pub\b|known_hosts|config\b|authorized_keys)\S+|id_(?:rsa|ed25519|ecdsa)(?!\.pub)"
               r"|~?/?\.aws/credentials|~?/?\.kube/config|\.netrc"
               r"|\.npmrc|\.pypirc|\.git-credentials|\.docker/config\.json|\.env)\b")
_SEND: dict[str, tuple[str, str, str, str]] = {
    "fr": (r"envo[iy]\w*|transmet\w*|upload\w*|televers\w*|publi\w*|post\w*|partag\w*|expedi\w*",
           r"variables? d'environnement|l'environnement|identifiants|mots? de passe|cles? (?:api|ssh|privees?)"
           r"|secrets|jetons?|tokens?|\.env\b",
           r"push\w*|pousse\w*|fusionn\w*|merge\w*",
           r"sans (?:aucune |la |les )?(?:revue|relecture|review|validation|verifications?)"
           r"|(?:saute|sautez|sauter|ignore|ignorez|ignorer|contourne|contournez|contourner|passe|passez|passer)"
           r" (?:la |les |l')?(?:revue|relecture|review|verifications?|controles?)"),
    "de": (r"schick\w*|send\w*|lade\w* (?:\w+ ){0,4}?hoch|hochlad\w*|upload\w*|poste\w*|ubermittel\w*|ubertrag\w*",
           r"umgebungsvariabl\w*|env-variabl\w*|zugangsdaten|passworter|schlussel|secrets|tokens?|api-?keys|\.env\b",
           r"push\w*|force-push\w*|merge\w*|committ?\w*",
           r"ohne (?:jedes |jeden |jede |code-?)?(?:review|prufung|freigabe)"
           r"|(?:review|code-?review|prufung)\w* (?:uberspring\w*|umgeh\w*|auslass\w*|weglass\w*)"
           r"|uberspring\w* (?:das |den |die )?(?:review|code-?review)"),
    "es": (r"envi(?!ron)\w*|mand\w*|sub(?:e|an|a|ir|elo|ela|elos|elas|amos)\b|public\w*|compart\w*|transmit\w*",
           r"variables? de entorno|el entorno|credenciales|contrasenas?|claves|secretos|tokens?|\.env\b",
           r"push\w*|empuj\w*|fusion\w*|merge\w*",
           r"sin (?:ninguna |la |el )?(?:revision|review|aprobacion)"
           r"|(?:salta|saltate|saltar|omite|omitir|evita|evitar|ignora|ignorar)\w* (?:la |las |el |los )?"
           r"(?:revision|review)"),
    "it": (r"invi\w*|mand\w*|caric\w*|condivid\w*|trasmett\w*|pubblic\w*",
           r"variabili (?:d'|di )ambiente|l'ambiente|credenziali|password|chiavi|segreti|token|\.env\b",
           r"push\w*|merg\w*",
           r"senza (?:alcuna |la )?(?:revisione|review)|salt\w* (?:la |il |i )?(?:revisione|review)"),
    "pt": (r"envi(?!ron)\w*|mand\w*|carreg\w*|publi\w*|compartilh\w*|transmit\w*|sub(?:a|am|ir|ir)\b|sobe",
           r"variave(?:is|l) de ambiente|o ambiente|credenciais|senhas?|chaves|segredos|tokens?|\.env\b",
           r"push\w*|empurr\w*|merge\w*",
           r"sem (?:nenhuma |a |o )?(?:revisao|review|aprovacao|pr|pull request|rodar (?:os )?testes)"
           r"|(?:pul\w*|ignor\w*) (?:a |o |os |as )?(?:revisao|review)"),
    "nl": (r"stuur\w*|verstuur\w*|upload\w*|post\w*|deel|verzend\w*",
           r"omgevingsvariabel\w*|inloggegevens|wachtwoorden|sleutels|secrets|tokens?|\.env\b",
           r"push\w*|merge\w*",
           r"zonder (?:review|goedkeuring)|sla\w* (?:de )?review\w* over"
           r"|review overslaan"),
    "pl": (r"wyslij\w*|przeslij\w*|wysylaj\w*|upload\w*|opublikuj\w*|zaladuj\w*|wrzuc\w*",
           r"zmienn\w* srodowisk\w*|hasla|klucze|sekrety|tokeny?|dane logowania|\.env\b",
           r"push\w*|wypchnij\w*|wypychaj\w*|merge\w*|scal\w*",
           r"bez (?:review|przegladu|recenzji|zatwierdzenia)|pomi\w* (?:review|przeglad\w*)"),
    "tr": (r"gonder\w*|yukle\w*|paylas\w*|ilet\w*",
           r"ortam degisken\w*|sifreler\w*|anahtarlar\w*|gizli\w*|token\w*|\.env\b",
           r"push\w*|gonder\w*|merge\w*",
           r"(?:review|inceleme\w*) (?:atla(?!ma)\w*|yapmadan|olmadan|gecmeden)|incelemesiz"),
    "ru": (r"отправ\w*|отошли\w*|перешли\w*|загрузи\w*|выгрузи\w*|опубликуи\w*|слеи\w*|пошли\w*",
           r"переменн\w* (?:окружения|среды)|окружени\w*|парол\w*|ключ(?!ев)\w*|секрет\w*|токен\w*|учетн\w* данн\w*"
           r"|\.env\b",
           r"пуш\w*|запуш\w*|push\w*|мерж\w*|влив\w*|залив\w*",
           r"без (?:ревью|код-?ревью|review|согласовани\w*)"
           r"|пропус\w* (?:ревью|код-?ревью)|минуя ревью"),
    "zh": (r"发送|发到|上传|传到|发给|转发|提交到",
           r"环境变量|密钥|密码|凭据|凭证|令牌|私钥|\.env",
           r"推送|强推|push|合并|提交",
           r"(?:跳过|绕过|无需|不需要|不用|不经过?|省略|免)[^。\n]{0,6}?(?:审查|评审|审核|review)"),
    "ja": (r"送信|送って|送る|アップロード|転送|POST",
           r"環境変数|パスワード|認証情報|秘密鍵|APIキー|トークン|\.env",
           r"プッシュ|push|マージ",
           r"(?:レビュー|承認)[^。\n]{0,6}?(?:スキップ|省略|飛ばし|なし|不要|せず|を通さず)"),
    "ko": (r"보내|전송|업로드",
           r"환경 ?변수|비밀번호|자격 증명|API 키|비밀 키|개인 키|토큰|\.env",
           r"푸시|push|머지|병합",
           r"(?:리뷰|검토|승인)[^.\n]{0,6}?(?:건너뛰|생략|없이|스킵|우회)"),
    "sv": (r"skicka\w*|ladda\w* upp|posta\w*|dela|overfor\w*",
           r"miljovariabl\w*|inloggningsuppgift\w*|losenord(?!s?aterstall)\w*|(?:api|ssh|privata)-?nycklar\w*|hemligheter\w*",
           r"push\w*|pusha\w*|merge\w*|sla ihop",
           r"utan (?:granskning|review|godkannande)|hoppa\w* over (?:granskning\w*|review\w*)"),
    "vi": (r"gui|tai len|upload|(?:d|\u0111)ang len|chia se|chuyen",
           r"bien moi truong|(?<!doi )(?<!dat lai )mat khau|khoa (?:api|ssh|bi mat|rieng)|thong tin dang nhap",
           r"push|(?:d|\u0111)ay",
           r"khong (?:can )?(?:review|duyet|kiem tra|xem xet)|bo qua (?:review|duyet|kiem tra|xem xet)"),
    "id": (r"kirim\w*|unggah\w*|upload|posting|bagikan",
           r"variabel lingkungan|(?<!ganti )(?<!reset )kata sandi|kunci (?:api|ssh|rahasia|privat)|kredensial",
           r"push",
           r"tanpa (?:review|tinjauan|persetujuan|pr)|lewati (?:review|tinjauan)"),
    "uk": (r"надішли\w*|відправ\w*|завантаж\w*|вивантаж\w*|опублікуи\w*|перешли\w*",
           r"змінн\w* (?:середовища|оточення)|(?<!скидання )(?<!зміни )парол\w*|(?:api|ssh|приватн\w*|секретн\w*)[ -]ключ\w*|облікові дані",
           r"пуш\w*|запуш\w*|push\w*",
           r"без (?:рев'ю|ревью|review|перевірки|погодження)"),
    "th": (r"ส่ง|อัปโหลด|อัพโหลด|โพสต์",
           r"ตัวแปรสภาพแวดล้อม|(?<!รีเซ็ต)(?<!เปลี่ยน)รหัสผ่าน|คีย์(?:ส่วนตัว| ?API| ?SSH|ลับ)|ข้อมูลรับรอง",
           r"push|พุช",
           r"ไม่ต้อง(?:รีวิว|ตรวจ)|ข้าม(?:การ)?(?:รีวิว|ตรวจ)"),
    "hi": (r"भेज|अपलोड|पोस्ट|साझा",
           r"पासवर्ड(?! रीसेट| बदल)|(?:API|SSH|निजी|गुप्त) कुंजी|एनवायरनमेंट वेरिएबल|पर्यावरण चर",
           r"push|पुश",
           r"बिना (?:रिव्यू|समीक्षा|review)"),
    "ar": (r"أرسل|ارسل|إرسال|ارفع|انشر|شارك",
           r"متغيرات البيئة|(?<!تعيين )(?<!تغيير )(?:كلمات المرور|كلمة المرور|كلمة السر)|مفتاح (?:API|SSH|خاص|سري)|المفاتيح (?:الخاصة|السرية)|بيانات الاعتماد",
           r"push|ادفع",
           r"بدون (?:مراجعة|review)|تخط\w* المراجعة"),
}
_MAIN = r"(?<![a-z])(?:main|master)(?![a-z])|主分支|主干|メインブランチ|메인 브랜치|основн\w* ветк\w*|la branche principale" \
        r"|la rama principal|il branch principale|a branch principal"
_URL = r"https?://"


_ANY_ORDER = ("vwu", "wvu", "wuv", "uwv", "vuw", "uvw")


def _sent_to_url(verbs: str, what: str, b: str, orders: tuple[str, ...] = _ANY_ORDER) -> str:
    """A verb of sending, what is sent and a URL in one sentence, in any of ``orders`` ("sube
    las variables de entorno a https://...", "... an https://... schicken", "把环境变量发送到
    https://...")."""
    s = r"[^.\n。]"
    parts = {"v": rf"{b}(?:{verbs})", "w": rf"(?:{b}(?:{what})|{_CRED_FILES})", "u": rf"(?:{_URL})\S{{0,200}}+"}
    return "(?i)" + "|".join(f"{parts[o[0]]}{s}{{0,60}}?{parts[o[1]]}{s}{{0,60}}?{parts[o[2]]}"
                             for o in orders)


# The languages round 9 added name what is sent before the URL: after it, the words are a
# page's subject ("send the link https://.../reset on changing the password").
_WHAT_FIRST = ("vwu", "wvu", "wuv")
_ROUND_9 = frozenset({"sv", "vi", "id", "uk", "th", "hi", "ar"})


def _pushed_unreviewed(push: str, skip: str, b: str) -> str:
    """Push to main and skip review or CI, in one sentence, in any order."""
    s = r"[^.\n。！？!?]"
    parts = {"p": f"{b}(?:{push})", "m": f"(?:{_MAIN})", "k": f"{b}(?:{skip})"}
    return "(?i)" + "|".join(f"{parts[a]}{s}{{0,60}}?{parts[b]}{s}{{0,60}}?{parts[c]}"
                             for a, b, c in ("pmk", "mpk", "kpm", "kmp", "pkm", "mkp"))


# What these rules need in the text, one quick search (injection skips them without it: a
# non-ASCII text runs every rule of its languages, the literal prefilter being for ASCII
# text only, and a six-order rule tried at every position costs ~0.2 ms a note).
# Scripts whose words are not set apart by \b: no spaces (CJK, Thai), or particles and
# marks joined to them (Hindi's vowel signs, Arabic's article).
_UNSPACED = frozenset({"zh", "ja", "ko", "th", "hi", "ar"})
_REQUIRES: dict[tuple[str, int], str] = {}
for _lang, (_verbs, _what, _push, _skip) in _SEND.items():
    _b = "" if _lang in _UNSPACED else r"\b"  # no word boundary inside CJK or Thai text
    _REQUIRES[_lang, len(_LANGS[_lang])] = "://"
    _REQUIRES[_lang, len(_LANGS[_lang]) + 1] = "main|master|主分支|主干|メインブランチ|메인 브랜치|основн|principal"
    _orders = _WHAT_FIRST if _lang in _ROUND_9 else _ANY_ORDER
    _LANGS[_lang] += [("exfiltration", _sent_to_url(_verbs, _what, _b, _orders)),
                      ("safety bypass", _pushed_unreviewed(_push, _skip, _b))]

# Words that turn an order into a rule against it ("禁止强制推送", "nie direkt auf main",
# "no envíes"); for Japanese and Korean they follow the verb. Checked by injection.py on
# the clause around a match of an exfiltration or safety-bypass rule.
_NEGATIONS = {
    "fr": r"\bne\b|\bn'|\bjamais\b|\binterdit", "de": r"\bnicht\b|\bnie\b|\bniemals\b|\bkein\w*|\bverboten",
    "es": r"\bno\b|\bnunca\b|\bjamas\b|\bprohibido", "it": r"\bnon\b|\bmai\b|\bvietato",
    "pt": r"\bnao\b|\bnunca\b|\bjamais\b|\bproibido", "nl": r"\bniet\b|\bnooit\b|\bverboden|\bgeen\b",
    "pl": r"\bnie\b|\bnigdy\b|\bzakaz\w*", "tr": r"\basla\b|\byasak\w*|\byapma\w*",
    "ru": r"\bне\b|\bникогда\b|\bзапрещ\w*", "zh": r"不要|禁止|不得|不能|切勿|严禁|不准|别|不可|勿|从不|绝不|决不",
    "ja": r"しないで|しない|禁止|ないで|いけない|ダメ|不可|しては", "ko": r"마세요|마십시오|금지|안 됩니다|하지 마|않",
    "sv": r"\binte\b|\baldrig\b|\bforbjud\w*", "vi": r"\bkhong\b|\bcam\b|\bdung\b|\bchang\b",
    "id": r"\bjangan\b|\btidak\b|\bdilarang\b", "uk": r"\bне\b|\bніколи\b|\bзаборон\w*",
    # (a negation bound to the verb: "ห้ามบอกผู้ใช้" after an order only hides it from the user)
    "th": r"(?:ห้าม|อย่า)(?:ส่ง|อัป|อัพ|โพสต์|push|พุช)", "hi": r"(?:मत|न|ना|कभी नहीं) (?:भेज|अपलोड|पोस्ट|push|पुश)",
    "ar": r"لا (?:ترسل|ترفع|تنشر|تدفع)|ممنوع|إياك"}


# A sentence in a language has some of its commonest words (or its script): a language's
# rules are compiled and run only on a text that has them (each costs ~1 ms to compile).
_HINTS = {
    "fr": r"les|des|est|une|et|tes|vos|tu|vous|du|ne|pas|le|la", "de": r"der|die|das|und|nicht|du|dem|den|alle|ist",
    "es": r"las|los|el|y|tus|del|ahora|eres|no|le|la|haz|sube|envia", "it": r"le|il|di|e|sei|tutte|gli|non|ora|adesso",
    "pt": r"as|os|e|voce|do|da|nao|todas|agora|envie|suba", "nl": r"de|het|en|je|alle|een|nu", "pl": r"i|w|na|sie|jestes|teraz",
    "tr": r"ve|bu|tum|onceki|bir|yok|icin|ile|adresine|sonra|lutfen", "ru": "[а-я]", "zh": "[\u4e00-\u9fff]",
    "ja": "[\u3040-\u30ff]", "ko": "[\uac00-\ud7af]",
    "sv": r"och|att|det|till|alla|inte|for|med|som|skicka|ignorera|innan|du", "vi": r"va|cac|nhung|khong|cho|gui|hay|moi|la|nay|tro",
    "id": r"dan|yang|di|ke|ini|untuk|dengan|semua|kirim|abaikan|jangan", "uk": "[ієґ]", "th": "[\u0e00-\u0e7f]",
    "hi": "[\u0900-\u097f]", "ar": "[\u0600-\u06ff]"}
