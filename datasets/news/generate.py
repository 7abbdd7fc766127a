"""Generate the fictional news dataset for graph-filtered search (seed 000).

Writes, next to this script:
  organizations.jsonl  companies with city, country, industry, supplier_of and invested_in
  people.jsonl         board members (board_member_of: organization ids)
  articles/*.md        short news stories, Markdown with YAML front matter (title, date, lang,
                       sentiment, tags, mentions = organization names or aliases as written)
  answers.json         the answer sets of the seed questions, computed from the files

Every company, person and event is invented; "Hyundai Motor" appears only as the neutral
customer of invented suppliers. Run `python datasets/news/generate.py`; the output depends only
on SEED, so reruns rewrite identical files.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path

SEED = 20240601
OUT_DIR = Path(__file__).resolve().parent

# id, name, aliases, city, country, industry, supplier_of, invested_in
ORGANIZATIONS: list[dict] = [
    # South Korea
    {"id": "hyundai-motor", "name": "Hyundai Motor", "aliases": ["Hyundai", "现代汽车"],
     "city": "Seoul", "country": "South Korea", "industry": "automotive"},
    {"id": "daejin-precision", "name": "Daejin Precision", "aliases": ["Daejin", "大进精密"],
     "city": "Ulsan", "country": "South Korea", "industry": "auto parts",
     "supplier_of": ["hyundai-motor"]},
    {"id": "hanbit-battery", "name": "Hanbit Battery Systems",
     "aliases": ["Hanbit Battery", "韩光电池"], "city": "Cheongju", "country": "South Korea",
     "industry": "batteries", "supplier_of": ["hyundai-motor"]},
    {"id": "mirae-glass", "name": "Mirae Glass", "aliases": ["Mirae", "未来玻璃"],
     "city": "Busan", "country": "South Korea", "industry": "glass",
     "supplier_of": ["hyundai-motor"]},
    # China
    {"id": "tianhe-electronics", "name": "Tianhe Electronics", "aliases": ["Tianhe", "天河电子"],
     "city": "Shenzhen", "country": "China", "industry": "electronics",
     "supplier_of": ["hyundai-motor", "yuanhang-auto"]},
    {"id": "yuanhang-auto", "name": "Yuanhang Auto", "aliases": ["Yuanhang", "远航汽车"],
     "city": "Hefei", "country": "China", "industry": "automotive"},
    {"id": "hengxin-lithium", "name": "Hengxin Lithium", "aliases": ["Hengxin", "恒信锂电"],
     "city": "Yichun", "country": "China", "industry": "lithium",
     "supplier_of": ["yuanhang-auto"]},
    {"id": "xinghe-cloud", "name": "Xinghe Cloud", "aliases": ["星河云", "星河云科技"],
     "city": "Hangzhou", "country": "China", "industry": "cloud computing"},
    {"id": "qinghe-dairy", "name": "Qinghe Dairy", "aliases": ["青禾乳业", "Qinghe"],
     "city": "Hohhot", "country": "China", "industry": "dairy"},
    # France
    {"id": "sorel-composites", "name": "Sorel Composites", "aliases": ["Sorel", "索雷尔复合材料"],
     "city": "Grenoble", "country": "France", "industry": "composites",
     "supplier_of": ["hyundai-motor", "rhenwald"]},
    {"id": "lumiere-electrique", "name": "Lumière Électrique",
     "aliases": ["Lumiere Electrique", "光明电气"], "city": "Lyon", "country": "France",
     "industry": "electrical equipment", "supplier_of": ["rhenwald"]},
    {"id": "atelier-numerique", "name": "Atelier Numérique",
     "aliases": ["Atelier Numerique", "数字工坊"], "city": "Paris", "country": "France",
     "industry": "software"},
    {"id": "maison-verlaine", "name": "Maison Verlaine", "aliases": ["Verlaine", "韦尔兰酒庄"],
     "city": "Bordeaux", "country": "France", "industry": "wine"},
    {"id": "banque-aubrac", "name": "Banque Aubrac", "aliases": ["Aubrac", "奥布拉克银行"],
     "city": "Paris", "country": "France", "industry": "banking"},
    {"id": "transports-garonne", "name": "Transports Garonne",
     "aliases": ["Garonne Transport", "加龙运输"], "city": "Toulouse", "country": "France",
     "industry": "logistics"},
    # Germany
    {"id": "rhenwald", "name": "Rhenwald Automobilwerke", "aliases": ["Rhenwald", "莱恩瓦尔德汽车"],
     "city": "Stuttgart", "country": "Germany", "industry": "automotive"},
    {"id": "brandt-antrieb", "name": "Brandt Antriebstechnik", "aliases": ["Brandt", "勃兰特传动"],
     "city": "Munich", "country": "Germany", "industry": "drivetrain",
     "supplier_of": ["rhenwald"]},
    {"id": "kranich-software", "name": "Kranich Software", "aliases": ["Kranich", "鹤翼软件"],
     "city": "Berlin", "country": "Germany", "industry": "software"},
    {"id": "elbe-chemie", "name": "Elbe Chemie", "aliases": ["Elbe Chemical", "易北化工"],
     "city": "Hamburg", "country": "Germany", "industry": "chemicals"},
    # United States
    {"id": "kestrel-motors", "name": "Kestrel Motors", "aliases": ["Kestrel", "红隼汽车"],
     "city": "Detroit", "country": "United States", "industry": "automotive"},
    {"id": "great-lakes-castings", "name": "Great Lakes Castings", "aliases": ["GLC", "大湖铸造"],
     "city": "Cleveland", "country": "United States", "industry": "castings",
     "supplier_of": ["kestrel-motors"]},
    {"id": "norvale-seating", "name": "Norvale Seating", "aliases": ["Norvale", "诺维尔座椅"],
     "city": "Columbus", "country": "United States", "industry": "seating",
     "supplier_of": ["kestrel-motors", "rhenwald"]},
    {"id": "northwind-analytics", "name": "Northwind Analytics",
     "aliases": ["Northwind", "北风分析"],
     "city": "San Francisco", "country": "United States", "industry": "software"},
    {"id": "bluefin-logistics", "name": "Bluefin Logistics", "aliases": ["Bluefin", "蓝鳍物流"],
     "city": "Seattle", "country": "United States", "industry": "logistics"},
    {"id": "harbor-pine", "name": "Harbor Pine Capital", "aliases": ["Harbor Pine", "港松资本"],
     "city": "Boston", "country": "United States", "industry": "investment",
     "invested_in": ["atelier-numerique", "northwind-analytics", "kranich-software"]},
    # United Kingdom
    {"id": "corvel-insurance", "name": "Corvel Insurance", "aliases": ["Corvel", "科维尔保险"],
     "city": "London", "country": "United Kingdom", "industry": "insurance"},
    {"id": "saffron-media", "name": "Saffron Media", "aliases": ["Saffron", "藏红花传媒"],
     "city": "Manchester", "country": "United Kingdom", "industry": "media"},
    # Japan
    {"id": "kanto-robotics", "name": "Kanto Robotics", "aliases": ["Kanto", "关东机器人"],
     "city": "Yokohama", "country": "Japan", "industry": "robotics"},
    {"id": "hoshino-pharma", "name": "Hoshino Pharmaceutical", "aliases": ["Hoshino", "星野制药"],
     "city": "Osaka", "country": "Japan", "industry": "pharmaceuticals"},
    # Norway, Canada, Singapore
    {"id": "nordlys-energi", "name": "Nordlys Energi", "aliases": ["Nordlys", "北极光能源"],
     "city": "Oslo", "country": "Norway", "industry": "energy"},
    {"id": "maple-ridge-foods", "name": "Maple Ridge Foods", "aliases": ["Maple Ridge", "枫岭食品"],
     "city": "Toronto", "country": "Canada", "industry": "food"},
    {"id": "cobalt-bay", "name": "Cobalt Bay Ventures", "aliases": ["Cobalt Bay", "钴湾创投"],
     "city": "Singapore", "country": "Singapore", "industry": "investment",
     "invested_in": ["hanbit-battery", "kanto-robotics", "xinghe-cloud"]},
]

PEOPLE: list[dict] = [
    {"id": "p-rod-johnson", "name": "Rod Johnson", "aliases": ["罗德·约翰逊"],
     "board_member_of": ["northwind-analytics", "corvel-insurance", "atelier-numerique"]},
    {"id": "p-ruth-johnson", "name": "Ruth Johnson", "aliases": ["露丝·约翰逊"],
     "board_member_of": ["bluefin-logistics", "saffron-media"]},
    {"id": "p-claire-fontaine", "name": "Claire Fontaine", "aliases": ["克莱尔·方丹"],
     "board_member_of": ["banque-aubrac", "maison-verlaine"]},
    {"id": "p-henri-dubois", "name": "Henri Dubois", "aliases": ["亨利·杜布瓦"],
     "board_member_of": ["transports-garonne", "sorel-composites", "lumiere-electrique"]},
    {"id": "p-park-min-jun", "name": "Park Min-jun", "aliases": ["朴敏俊"],
     "board_member_of": ["daejin-precision", "hanbit-battery"]},
    {"id": "p-kim-seo-yeon", "name": "Kim Seo-yeon", "aliases": ["金瑞妍"],
     "board_member_of": ["mirae-glass", "cobalt-bay"]},
    {"id": "p-ingrid-vogel", "name": "Ingrid Vogel", "aliases": ["英格丽德·福格尔"],
     "board_member_of": ["rhenwald", "elbe-chemie"]},
    {"id": "p-liu-fang", "name": "Liu Fang", "aliases": ["刘芳"],
     "board_member_of": ["xinghe-cloud", "tianhe-electronics"]},
    {"id": "p-zhou-wei", "name": "Zhou Wei", "aliases": ["周伟"],
     "board_member_of": ["yuanhang-auto", "hengxin-lithium"]},
    {"id": "p-wang-lei", "name": "Wang Lei", "aliases": ["王磊"],
     "board_member_of": ["qinghe-dairy"]},
    {"id": "p-marcus-reed", "name": "Marcus Reed", "aliases": ["马库斯·里德"],
     "board_member_of": ["bluefin-logistics", "northwind-analytics"]},
    {"id": "p-olivia-grant", "name": "Olivia Grant", "aliases": ["奥利维亚·格兰特"],
     "board_member_of": ["saffron-media", "corvel-insurance"]},
    {"id": "p-tanaka-aiko", "name": "Tanaka Aiko", "aliases": ["田中爱子"],
     "board_member_of": ["kanto-robotics", "hoshino-pharma"]},
    {"id": "p-sofia-lindqvist", "name": "Sofia Lindqvist", "aliases": ["索菲亚·林德奎斯特"],
     "board_member_of": ["nordlys-energi", "kranich-software"]},
    {"id": "p-daniel-okafor", "name": "Daniel Okafor", "aliases": ["丹尼尔·奥卡福"],
     "board_member_of": ["harbor-pine", "kestrel-motors"]},
    {"id": "p-emily-chen", "name": "Emily Chen", "aliases": ["陈艾米"],
     "board_member_of": ["maple-ridge-foods", "bluefin-logistics"]},
    {"id": "p-james-whitfield", "name": "James Whitfield", "aliases": ["詹姆斯·惠特菲尔德"],
     "board_member_of": ["great-lakes-castings", "norvale-seating"]},
    {"id": "p-lena-hartmann", "name": "Lena Hartmann", "aliases": ["莱娜·哈特曼"],
     "board_member_of": ["brandt-antrieb", "kranich-software"]},
]

COUNTRY_ZH = {
    "South Korea": "韩国", "China": "中国", "France": "法国", "Germany": "德国",
    "United States": "美国", "United Kingdom": "英国", "Japan": "日本", "Norway": "挪威",
    "Canada": "加拿大", "Singapore": "新加坡",
}
COUNTRY_EN = {"United States": "the United States", "United Kingdom": "the United Kingdom"}
CITY_ZH = {
    "Seoul": "首尔", "Ulsan": "蔚山", "Cheongju": "清州", "Busan": "釜山", "Shenzhen": "深圳",
    "Hefei": "合肥", "Yichun": "宜春", "Hangzhou": "杭州", "Hohhot": "呼和浩特",
    "Grenoble": "格勒诺布尔", "Lyon": "里昂", "Paris": "巴黎", "Bordeaux": "波尔多",
    "Toulouse": "图卢兹", "Stuttgart": "斯图加特", "Munich": "慕尼黑", "Berlin": "柏林",
    "Hamburg": "汉堡", "Detroit": "底特律", "Cleveland": "克利夫兰", "Columbus": "哥伦布",
    "San Francisco": "旧金山", "Seattle": "西雅图", "Boston": "波士顿", "London": "伦敦",
    "Manchester": "曼彻斯特", "Yokohama": "横滨", "Osaka": "大阪", "Oslo": "奥斯陆",
    "Toronto": "多伦多", "Singapore": "新加坡",
}
# industry -> (en label, zh label, en product, zh product)
INDUSTRY = {
    "automotive": ("carmaker", "汽车制造商", "electric crossover", "电动跨界车"),
    "auto parts": ("auto parts maker", "汽车零部件企业", "door modules", "车门模块"),
    "batteries": ("battery maker", "电池制造商", "battery packs", "动力电池包"),
    "glass": ("glass maker", "玻璃制造商", "laminated windscreens", "夹层挡风玻璃"),
    "electronics": ("electronics maker", "电子企业", "power control chips", "功率控制芯片"),
    "lithium": ("lithium producer", "锂电材料企业", "cathode materials", "正极材料"),
    "cloud computing": ("cloud provider", "云服务商", "managed database service", "托管数据库服务"),
    "dairy": ("dairy group", "乳制品企业", "yoghurt drinks", "酸奶饮品"),
    "composites": ("composites maker", "复合材料企业", "carbon-fibre panels", "碳纤维面板"),
    "electrical equipment": ("electrical equipment maker", "电气设备企业", "charging units",
                             "充电单元"),
    "software": ("software company", "软件公司", "analytics platform", "数据分析平台"),
    "wine": ("wine house", "葡萄酒企业", "vintage", "年份酒"),
    "banking": ("bank", "银行", "mobile banking app", "手机银行应用"),
    "logistics": ("logistics group", "物流企业", "freight service", "货运服务"),
    "drivetrain": ("drivetrain supplier", "传动系统供应商", "gearboxes", "变速箱"),
    "chemicals": ("chemicals group", "化工企业", "coatings", "涂料"),
    "castings": ("foundry group", "铸造企业", "aluminium castings", "铝合金铸件"),
    "seating": ("seat maker", "座椅制造商", "seat frames", "座椅骨架"),
    "investment": ("investment firm", "投资机构", "growth fund", "成长基金"),
    "insurance": ("insurer", "保险公司", "home insurance product", "家庭保险产品"),
    "media": ("media group", "传媒集团", "streaming service", "流媒体服务"),
    "robotics": ("robotics maker", "机器人企业", "warehouse robots", "仓储机器人"),
    "pharmaceuticals": ("drugmaker", "制药企业", "allergy medicine", "抗过敏药"),
    "energy": ("energy company", "能源企业", "offshore wind farm", "海上风电场"),
    "food": ("food company", "食品企业", "frozen meals", "速冻餐食"),
}
# country -> (en money format, zh money format, factor applied to an amount in millions)
MONEY = {
    "France": ("€{} million", "{}万欧元", 1), "Germany": ("€{} million", "{}万欧元", 1),
    "United States": ("${} million", "{}万美元", 1),
    "United Kingdom": ("£{} million", "{}万英镑", 1),
    "China": ("{} million yuan", "{}万元", 7), "Japan": ("{} million yen", "{}万日元", 150),
    "South Korea": ("{} million won", "{}万韩元", 1300),
    "Norway": ("{} million kroner", "{}万挪威克朗", 10),
    "Canada": ("C${} million", "{}万加元", 1), "Singapore": ("S${} million", "{}万新加坡元", 1),
}

# Sentence pools. Slots: {org} first mention, {short} later mentions, {partner}/{partner_short}
# the other company (customer of a supplier, investor of an investee), {person} a board member,
# {city} {country} {industry} {product} {year} {quarter} {month} {pct} {pct2} {n} {amount}
# {days} {weeks}.
TEMPLATES: dict[str, dict[str, dict[str, list[str]]]] = {
    "remote_work": {
        "en": {
            "head": [
                "{org} lets staff work from home {days} days a week",
                "{org} makes remote work permanent for office employees",
                "{org} unveils flexible work policy after staff survey",
                "Remote-first: {org} rewrites its rules for office work",
            ],
            "lead": [
                "{org}, the {city}-based {industry}, said on Monday that most of its office "
                "staff will be allowed to work remotely for up to {days} days a week.",
                "{org} announced a new remote-work policy that lets employees choose where "
                "they work, ending a trial that began earlier this year.",
                "Employees at {org} will no longer be required to come into the office every "
                "day, the {industry} told staff in an internal memo seen by reporters.",
            ],
            "detail": [
                "Under the policy, teams will agree on one shared office day each week so that "
                "meetings and training can still happen in person.",
                "The company said it would give every employee a one-time allowance to set up "
                "a desk, chair and monitor at home.",
                "{short} will keep its headquarters in {city} but plans to turn part of the "
                "space into bookable meeting rooms.",
                "Staff who prefer the office can keep their assigned desks, the memo said.",
                "A survey of {n} employees found that {pct}% wanted to keep working from home "
                "at least part of the week.",
                "Managers will be trained to judge performance by results rather than hours "
                "spent at a desk.",
                "The policy also allows employees to work from another country for up to "
                "{weeks} weeks a year, subject to tax rules.",
                "{short} said the change would help it hire engineers who do not live near "
                "its offices.",
                "Roles that require on-site equipment, such as laboratory and facilities "
                "jobs, are excluded from the new rules.",
            ],
            "quote": [
                "\"We have learned that good work does not depend on a postcode,\" the chief "
                "people officer said.",
                "\"Flexibility is now part of the deal we offer, not a perk,\" a spokesperson "
                "for {short} said.",
                "\"Our people asked for this, and the results of the trial convinced us,\" the "
                "chief executive told employees.",
            ],
        },
        "zh": {
            "head": [
                "{org}宣布员工每周可居家办公{days}天",
                "{org}推出长期远程办公政策",
                "{org}调整办公制度 远程办公成为常态",
                "员工调查之后，{org}决定实行灵活办公",
            ],
            "lead": [
                "总部位于{city}的{industry}{org}周一宣布，公司大部分办公室员工今后每周最多可以"
                "居家办公{days}天。",
                "{org}日前发布新的远程办公政策，员工可以自主选择工作地点，此前的试行期随之结束。",
                "据一份内部通知显示，{org}将不再要求员工每天到岗，远程办公将成为长期安排。",
            ],
            "detail": [
                "按照新规定，每个团队每周约定一天共同到办公室，用于面对面开会和培训。",
                "公司表示，将向每位员工发放一次性补贴，用于在家中添置桌椅和显示器。",
                "{short}仍将保留在{city}的总部，但计划把部分办公区域改造成可预约的会议室。",
                "喜欢在办公室工作的员工可以保留固定工位。",
                "一项覆盖{n}名员工的调查显示，{pct}%的受访者希望至少部分时间居家办公。",
                "管理人员将接受培训，学习以工作成果而不是在岗时长来评价绩效。",
                "新政策还允许员工每年在其他国家远程工作最多{weeks}周，但须符合当地税务规定。",
                "{short}认为，这一调整有助于招聘不住在办公地点附近的工程师。",
                "需要使用现场设备的岗位，例如实验室和后勤岗位，不在新政策适用范围之内。",
            ],
            "quote": [
                "公司首席人力官表示：“好的工作成果并不取决于在哪里办公。”",
                "{short}发言人说：“灵活办公如今是我们对员工承诺的一部分，而不是额外福利。”",
                "首席执行官在致员工信中写道：“这是大家提出的要求，试行结果也说服了我们。”",
            ],
        },
    },
    "earnings_up": {
        "en": {
            "head": [
                "{org} profit jumps as demand for its {product} grows",
                "{org} beats forecasts with strong {quarter} results",
                "Record quarter for {org} lifts full-year outlook",
                "{org} raises guidance after revenue climbs {pct}%",
            ],
            "lead": [
                "{org} reported a {pct}% rise in {quarter} revenue on Thursday, helped by strong "
                "demand for its {product}.",
                "The {city}-based {industry} {org} posted net profit of {amount} for {quarter}, "
                "well above analysts' expectations.",
                "Shares of {org} rose after the {industry} raised its full-year forecast on the "
                "back of a better-than-expected quarter.",
            ],
            "detail": [
                "Operating margin widened by {pct2} percentage points as cost savings took effect.",
                "Sales outside {country} grew fastest and now make up more than a third of the "
                "total.",
                "{short} said orders for its {product} were booked well into next year.",
                "The company plans to return part of the cash to shareholders through a higher "
                "dividend.",
                "Analysts had expected a more modest increase after a weak start to the year.",
                "{short} also cut its debt, leaving more room for new investment.",
                "Management pointed to lower energy and freight costs as a tailwind.",
                "The results were the strongest in the company's history.",
            ],
            "quote": [
                "\"Customers are choosing quality, and it shows in our numbers,\" the chief "
                "executive said on a call with analysts.",
                "\"We are growing without taking shortcuts on cost discipline,\" the chief "
                "financial officer of {short} said.",
                "\"This is a very clean set of results,\" said an analyst who covers the "
                "{industry}.",
            ],
        },
        "zh": {
            "head": [
                "{product}需求旺盛 {org}利润大增",
                "{org}{quarter}业绩超出预期",
                "创纪录季度带动{org}上调全年预期",
                "{org}营收增长{pct}% 上调业绩指引",
            ],
            "lead": [
                "{org}周四公布，{quarter}营收同比增长{pct}%，主要得益于{product}需求强劲。",
                "总部位于{city}的{industry}{org}{quarter}实现净利润{amount}，明显高于分析师预期。",
                "{org}上调全年业绩预期后，公司股价应声上涨。",
            ],
            "detail": [
                "随着降本措施见效，经营利润率提高了{pct2}个百分点。",
                "{country}以外市场增长最快，目前已占总销售额的三分之一以上。",
                "{short}表示，{product}的订单已经排到明年。",
                "公司计划通过提高分红，把部分现金回馈给股东。",
                "此前分析师普遍预计，在年初表现疲软之后，公司增幅会较为温和。",
                "{short}同时降低了负债水平，为后续投资留出了更多空间。",
                "管理层指出，能源和运输成本下降也带来了助力。",
                "这是公司成立以来最好的一份季度成绩单。",
            ],
            "quote": [
                "首席执行官在分析师电话会上说：“客户选择了品质，这一点体现在我们的数字上。”",
                "{short}首席财务官表示：“我们在增长的同时没有放松成本管控。”",
                "一位长期跟踪该行业的分析师评价说：“这是一份非常扎实的财报。”",
            ],
        },
    },
    "earnings_down": {
        "en": {
            "head": [
                "{org} profit falls as costs bite",
                "{org} cuts outlook after weak {quarter}",
                "Disappointing quarter sends {org} shares lower",
                "{org} revenue slides {pct}% amid soft demand",
            ],
            "lead": [
                "{org} said {quarter} revenue fell {pct}% from a year earlier as demand for its "
                "{product} weakened.",
                "The {industry} {org} lowered its full-year forecast on Tuesday, blaming higher "
                "costs and slower orders.",
                "{org} swung to a loss of {amount} in {quarter}, its first quarterly loss in "
                "several years.",
            ],
            "detail": [
                "Margins shrank by {pct2} percentage points as wage and material costs rose.",
                "{short} said customers in {country} were delaying purchases.",
                "The company will review its spending plans and postpone some projects.",
                "Analysts said the outlook cut was larger than they had expected.",
                "Inventory built up in the second half, tying up cash.",
                "{short} said it would not pay an interim dividend this year.",
                "The weak quarter followed two years of steady growth.",
            ],
            "quote": [
                "\"We are not satisfied with these results,\" the chief executive of {short} said.",
                "\"The market turned faster than we planned for,\" the chief financial officer "
                "told analysts.",
                "\"Investors will want to see a credible plan,\" one fund manager said.",
            ],
        },
        "zh": {
            "head": [
                "成本压力加大 {org}利润下滑",
                "{quarter}表现疲弱 {org}下调全年预期",
                "{org}季度业绩令人失望 股价下跌",
                "需求疲软 {org}营收下降{pct}%",
            ],
            "lead": [
                "{org}表示，由于{product}需求走弱，{quarter}营收同比下降{pct}%。",
                "{industry}{org}周二下调全年业绩预期，原因是成本上升、订单放缓。",
                "{org}{quarter}亏损{amount}，这是公司多年来首次出现季度亏损。",
            ],
            "detail": [
                "由于工资和原材料成本上涨，利润率收窄了{pct2}个百分点。",
                "{short}说，{country}客户正在推迟采购。",
                "公司将重新审视支出计划，部分项目将延期。",
                "分析师表示，此次下调幅度超出了他们的预期。",
                "下半年库存增加，占用了大量现金。",
                "{short}表示今年不派发中期股息。",
                "在此之前，公司已经连续两年保持稳定增长。",
            ],
            "quote": [
                "{short}首席执行官说：“我们对这样的业绩并不满意。”",
                "首席财务官对分析师表示：“市场转向的速度比我们预想的更快。”",
                "一位基金经理说：“投资者希望看到一份可信的改进计划。”",
            ],
        },
    },
    "layoffs": {
        "en": {
            "head": [
                "{org} to cut {n} jobs in restructuring",
                "{org} announces layoffs as orders dry up",
                "Job cuts at {org} hit staff in {city}",
                "{org} plans to shed {pct}% of its workforce",
            ],
            "lead": [
                "{org} will cut about {n} jobs, or {pct}% of its workforce, the {industry} said "
                "on Wednesday.",
                "The {city}-based {industry} {org} announced a restructuring that includes "
                "layoffs and the closure of two sites.",
                "{org} told employees that it would eliminate {n} positions over the next "
                "{weeks} weeks.",
            ],
            "detail": [
                "Most of the cuts will fall on administrative and sales roles.",
                "Unions said they had not been consulted and called the plan unacceptable.",
                "{short} expects to book restructuring charges of {amount}.",
                "Affected employees will be offered severance and help finding new work.",
                "The company said the cuts were needed to protect its long-term future.",
                "Local officials in {city} said they would meet the management to discuss the "
                "plan.",
                "Hiring has been frozen across the group until further notice.",
            ],
            "quote": [
                "\"These are painful decisions that affect colleagues and their families,\" the "
                "chief executive of {short} said.",
                "\"Workers are paying for management's mistakes,\" a union representative said.",
                "\"Nobody in the building saw this coming,\" one employee said.",
            ],
        },
        "zh": {
            "head": [
                "{org}重组 计划裁员{n}人",
                "订单萎缩 {org}宣布裁员",
                "{org}裁员波及{city}员工",
                "{org}拟裁减{pct}%员工",
            ],
            "lead": [
                "{industry}{org}周三表示，将裁减约{n}个岗位，占员工总数的{pct}%。",
                "总部位于{city}的{org}宣布重组计划，包括裁员和关闭两处厂区。",
                "{org}通知员工，未来{weeks}周内将撤销{n}个职位。",
            ],
            "detail": [
                "裁员主要集中在行政和销售岗位。",
                "工会表示事先没有得到征询，认为这一计划无法接受。",
                "{short}预计将为此计提{amount}的重组费用。",
                "受影响的员工将获得补偿金，并得到再就业方面的帮助。",
                "公司称，裁员是为了保障长远发展。",
                "{city}地方官员表示，将与公司管理层会面讨论这一计划。",
                "集团已全面冻结招聘，直至另行通知。",
            ],
            "quote": [
                "{short}首席执行官说：“这些决定很痛苦，影响到同事和他们的家庭。”",
                "一位工会代表说：“工人在为管理层的失误买单。”",
                "一名员工说：“大楼里没有人料到会这样。”",
            ],
        },
    },
    "strike": {
        "en": {
            "head": [
                "Workers at {org} walk out over pay",
                "Strike halts operations at {org} in {city}",
                "{org} hit by {days}-day strike",
            ],
            "lead": [
                "Workers at {org} began a {days}-day strike on Monday after talks over pay and "
                "working hours broke down.",
                "Operations at the {city} sites of {org} came to a standstill as staff walked "
                "out in a dispute over wages.",
            ],
            "detail": [
                "The union is demanding a raise of {pct}% to offset rising living costs.",
                "{short} said it had offered {pct2}% and called the demand unrealistic.",
                "Customers were warned to expect delays of up to {weeks} weeks.",
                "Picket lines formed at the main gate early in the morning.",
                "It is the first strike at the company in more than a decade.",
                "Both sides said they were willing to return to talks.",
            ],
            "quote": [
                "\"We have been patient for too long,\" a union spokesperson said.",
                "\"Our offer is fair and remains on the table,\" a spokesperson for {short} said.",
            ],
        },
        "zh": {
            "head": [
                "{org}员工因薪资问题罢工",
                "罢工致{org}{city}业务停摆",
                "{org}遭遇为期{days}天的罢工",
            ],
            "lead": [
                "由于薪资和工时谈判破裂，{org}员工周一开始为期{days}天的罢工。",
                "因工资纠纷，{org}位于{city}的多处设施运营陷入停顿。",
            ],
            "detail": [
                "工会要求加薪{pct}%，以抵消生活成本上涨。",
                "{short}表示已提出加薪{pct2}%，并称工会的要求不切实际。",
                "公司提醒客户，交付可能延迟最多{weeks}周。",
                "一大早，工人们就在正门外拉起了纠察线。",
                "这是公司十多年来的第一次罢工。",
                "双方都表示愿意重返谈判桌。",
            ],
            "quote": [
                "工会发言人说：“我们已经忍耐太久了。”",
                "{short}发言人表示：“我们的方案是公平的，仍然有效。”",
            ],
        },
    },
    "regulatory_fine": {
        "en": {
            "head": [
                "Regulator fines {org} {amount}",
                "{org} penalised over compliance failures",
                "{org} to pay {amount} to settle investigation",
            ],
            "lead": [
                "Regulators in {country} fined {org} {amount} on Friday for failures in its "
                "internal controls.",
                "{org} agreed to pay {amount} to settle an investigation into how it handled "
                "customer data.",
            ],
            "detail": [
                "The regulator said the problems had gone unnoticed for {n} days.",
                "{short} said it had already fixed the weaknesses and hired additional staff.",
                "The fine is among the largest ever imposed on a {industry} in {country}.",
                "An independent auditor will review the company's systems for two years.",
                "Customers affected by the errors will be compensated.",
                "The investigation began after a complaint by a former employee.",
            ],
            "quote": [
                "\"We accept the findings and apologise to our customers,\" {short} said in a "
                "statement.",
                "\"Rules exist to protect the public,\" the head of the regulator said.",
            ],
        },
        "zh": {
            "head": [
                "监管机构对{org}处以{amount}罚款",
                "{org}因合规问题受罚",
                "{org}支付{amount}与监管机构和解",
            ],
            "lead": [
                "{country}监管机构周五宣布，因内部控制存在缺陷，对{org}处以{amount}罚款。",
                "{org}同意支付{amount}，以了结一项关于客户数据处理问题的调查。",
            ],
            "detail": [
                "监管机构称，相关问题在{n}天里一直没有被发现。",
                "{short}表示已经修补漏洞，并增聘了合规人员。",
                "这是{country}对{industry}开出的最大罚单之一。",
                "未来两年，将由独立审计机构对公司系统进行审查。",
                "受影响的客户将获得赔偿。",
                "调查起因于一名前员工的投诉。",
            ],
            "quote": [
                "{short}在声明中说：“我们接受调查结论，并向客户致歉。”",
                "监管机构负责人表示：“规则的存在是为了保护公众。”",
            ],
        },
    },
    "recall": {
        "en": {
            "head": [
                "{org} recalls {product} over safety concern",
                "{org} issues recall affecting {n} units",
                "Defect forces {org} to recall {product}",
            ],
            "lead": [
                "{org} is recalling about {n} units of its {product} after finding a defect "
                "that could pose a safety risk.",
                "The {industry} {org} said on Tuesday it would recall {product} made over a "
                "{weeks}-week period.",
            ],
            "detail": [
                "No injuries have been reported, the company said.",
                "The fault was traced to a single production line in {city}.",
                "{short} expects the recall to cost about {amount}.",
                "Customers will be contacted directly and offered a free replacement.",
                "The company has added an extra inspection step to prevent a repeat.",
                "Regulators in {country} said they were monitoring the recall.",
            ],
            "quote": [
                "\"Safety comes before everything else,\" a spokesperson for {short} said.",
                "\"We are sorry for the inconvenience to our customers,\" the company said.",
            ],
        },
        "zh": {
            "head": [
                "存在安全隐患 {org}召回{product}",
                "{org}宣布召回{n}件产品",
                "产品缺陷迫使{org}召回{product}",
            ],
            "lead": [
                "{org}发现一处可能带来安全风险的缺陷，将召回约{n}件{product}。",
                "{industry}{org}周二表示，将召回在{weeks}周内生产的{product}。",
            ],
            "detail": [
                "公司表示，目前尚未收到受伤报告。",
                "问题被追溯到{city}的一条生产线。",
                "{short}预计此次召回将花费约{amount}。",
                "公司将直接联系客户，并免费提供更换。",
                "公司已增加一道检验工序，防止问题再次发生。",
                "{country}监管部门表示正在关注召回进展。",
            ],
            "quote": [
                "{short}发言人说：“安全高于一切。”",
                "公司在声明中说：“给客户带来不便，我们深表歉意。”",
            ],
        },
    },
    "expansion": {
        "en": {
            "head": [
                "{org} to build new facility near {city}",
                "{org} invests {amount} to expand capacity",
                "{org} opens new site and plans to hire {n}",
            ],
            "lead": [
                "{org} will invest {amount} in a new facility near {city}, the {industry} said "
                "on Monday.",
                "The {industry} {org} announced plans to expand capacity by {pct}% over the "
                "next two years.",
                "{org} opened a new site on Thursday and said it expects to hire {n} people.",
            ],
            "detail": [
                "Construction is due to start in {month} and finish within eighteen months.",
                "The site will run largely on renewable electricity.",
                "{short} said demand for its {product} has outgrown its existing plants.",
                "Local authorities welcomed the investment and the jobs it will bring.",
                "The expansion will be financed from cash and a new credit line.",
                "{short} is also training apprentices with a local technical college.",
            ],
            "quote": [
                "\"This is a vote of confidence in {city},\" the mayor said.",
                "\"We are building for the next decade, not the next quarter,\" the chief "
                "executive of {short} said.",
            ],
        },
        "zh": {
            "head": [
                "{org}将在{city}附近新建工厂",
                "{org}投资{amount}扩充产能",
                "{org}新基地投用 计划招聘{n}人",
            ],
            "lead": [
                "{industry}{org}周一表示，将投资{amount}在{city}附近建设新工厂。",
                "{org}宣布，未来两年将把产能提高{pct}%。",
                "{org}周四启用新基地，并表示预计将招聘{n}名员工。",
            ],
            "detail": [
                "工程计划于{month}开工，十八个月内完工。",
                "新基地将主要使用可再生能源电力。",
                "{short}表示，{product}的需求已经超出现有工厂的承受能力。",
                "当地政府对这笔投资及其带来的就业表示欢迎。",
                "扩建资金将来自公司自有现金和一笔新的信贷额度。",
                "{short}还与当地一所职业技术学院合作培养学徒。",
            ],
            "quote": [
                "市长说：“这是对{city}投下的信任票。”",
                "{short}首席执行官说：“我们着眼的是未来十年，而不是下一个季度。”",
            ],
        },
    },
    "product_launch": {
        "en": {
            "head": [
                "{org} launches new {product}",
                "{org} unveils next generation of its {product}",
                "First look: the new {product} from {org}",
            ],
            "lead": [
                "{org} on Wednesday launched a new {product}, its most important release in "
                "years.",
                "The {industry} {org} unveiled the next generation of its {product} at an event "
                "in {city}.",
            ],
            "detail": [
                "The company said the new version is {pct}% more efficient than its predecessor.",
                "Deliveries to customers will begin in {month}.",
                "{short} spent {amount} developing the product over three years.",
                "Early reviews praised the design but questioned the price.",
                "The launch puts {short} in direct competition with larger rivals.",
                "Pilot customers have tested the product for the past {weeks} weeks.",
            ],
            "quote": [
                "\"We listened to our customers and started from a blank page,\" the head of "
                "product at {short} said.",
                "\"It raises the bar for the whole industry,\" said one early customer.",
            ],
        },
        "zh": {
            "head": [
                "{org}发布新款{product}",
                "{org}推出新一代{product}",
                "抢先看：{org}新款{product}",
            ],
            "lead": [
                "{org}周三发布新款{product}，这是公司多年来最重要的一次新品发布。",
                "{industry}{org}在{city}举行活动，推出新一代{product}。",
            ],
            "detail": [
                "公司称，新版本的效率比上一代提高了{pct}%。",
                "产品将于{month}开始向客户交付。",
                "{short}在三年间为此投入了{amount}的研发费用。",
                "早期评测称赞了设计，但对价格有所保留。",
                "此次发布使{short}与规模更大的对手展开正面竞争。",
                "过去{weeks}周，多家试点客户已经试用了这款产品。",
            ],
            "quote": [
                "{short}产品负责人说：“我们认真听取了客户意见，一切从零开始设计。”",
                "一位早期客户评价说：“它提高了整个行业的标准。”",
            ],
        },
    },
    "sustainability": {
        "en": {
            "head": [
                "{org} sets target to cut emissions by {pct}%",
                "{org} pledges to reach net zero by 2040",
                "{org} switches {city} operations to renewable power",
            ],
            "lead": [
                "{org} said it would cut its greenhouse gas emissions by {pct}% by the end of "
                "the decade.",
                "The {industry} {org} signed a long-term contract to buy renewable electricity "
                "for its operations in {city}.",
            ],
            "detail": [
                "The plan includes replacing diesel vehicles with electric ones.",
                "{short} will publish progress against the target every year.",
                "Environmental groups called the goal a step in the right direction.",
                "The company will spend {amount} on energy efficiency over five years.",
                "Suppliers will be asked to report their own emissions from next year.",
            ],
            "quote": [
                "\"Climate targets only matter if you can measure them,\" the sustainability "
                "director of {short} said.",
                "\"We welcome the commitment and will watch the delivery,\" an environmental "
                "campaigner said.",
            ],
        },
        "zh": {
            "head": [
                "{org}设定减排{pct}%的目标",
                "{org}承诺2040年实现净零排放",
                "{org}{city}业务全面改用绿色电力",
            ],
            "lead": [
                "{org}表示，到本十年末将把温室气体排放量减少{pct}%。",
                "{industry}{org}签署长期购电协议，为其{city}业务采购可再生能源电力。",
            ],
            "detail": [
                "计划包括用电动车辆替换柴油车辆。",
                "{short}将每年公布目标完成情况。",
                "环保组织称这一目标是朝着正确方向迈出的一步。",
                "公司将在五年内投入{amount}用于节能改造。",
                "从明年起，供应商也将被要求报告自身的排放数据。",
            ],
            "quote": [
                "{short}可持续发展总监说：“气候目标只有可以衡量才有意义。”",
                "一位环保人士说：“我们欢迎这一承诺，也会持续关注落实情况。”",
            ],
        },
    },
    "leadership": {
        "en": {
            "head": [
                "{person} joins the board of {org}",
                "{org} appoints {person} as non-executive director",
                "{org} strengthens its board with {person}",
            ],
            "lead": [
                "{org} said on Monday that {person} has joined its board of directors as a "
                "non-executive member.",
                "The {industry} {org} appointed {person} to its board, effective immediately.",
            ],
            "detail": [
                "{person} brings long experience in finance and corporate strategy.",
                "The appointment follows the retirement of a long-serving director.",
                "{person} will also sit on the board's audit committee.",
                "Shareholders will be asked to confirm the appointment at the next annual "
                "meeting.",
                "The board now has {n} members, a majority of them independent.",
            ],
            "quote": [
                "\"{person} will bring valuable perspective as we enter a new phase,\" the chair "
                "of {short} said.",
                "\"I am delighted to join such a capable team,\" {person} said.",
            ],
        },
        "zh": {
            "head": [
                "{person}加入{org}董事会",
                "{org}任命{person}为非执行董事",
                "{org}董事会迎来新成员{person}",
            ],
            "lead": [
                "{org}周一宣布，{person}已加入公司董事会，担任非执行董事。",
                "{industry}{org}任命{person}为董事会成员，即日生效。",
            ],
            "detail": [
                "{person}在财务和企业战略方面拥有丰富经验。",
                "此前，一位任职多年的董事刚刚退休。",
                "{person}还将加入董事会审计委员会。",
                "这项任命将在下一次股东大会上提请股东确认。",
                "目前董事会共有{n}名成员，其中多数为独立董事。",
            ],
            "quote": [
                "{short}董事长说：“在公司进入新阶段之际，{person}将带来宝贵的视角。”",
                "{person}表示：“很高兴加入这样一支能干的团队。”",
            ],
        },
    },
    "investment": {
        "en": {
            "head": [
                "{partner} invests {amount} in {org}",
                "{org} raises {amount} in round led by {partner}",
                "{org} lands backing from {partner}",
            ],
            "lead": [
                "{org} has raised {amount} in a funding round led by {partner}, the companies "
                "said on Tuesday.",
                "The investment firm {partner} has taken a minority stake in {org}, the "
                "{city}-based {industry}.",
            ],
            "detail": [
                "{short} will use the money to hire engineers and expand abroad.",
                "The deal values the company at several times its annual revenue.",
                "{partner_short} will take a seat on the board as part of the agreement.",
                "Existing shareholders also took part in the round.",
                "{short} said it had turned down offers from two other investors.",
            ],
            "quote": [
                "\"{short} has the product and the team to lead its market,\" a partner at "
                "{partner_short} said.",
                "\"This funding lets us move faster,\" the founder of {short} said.",
            ],
        },
        "zh": {
            "head": [
                "{partner}向{org}投资{amount}",
                "{org}完成{amount}融资 由{partner}领投",
                "{org}获得{partner}投资",
            ],
            "lead": [
                "{org}周二宣布完成{amount}融资，本轮由{partner}领投。",
                "投资机构{partner}已入股总部位于{city}的{industry}{org}，持有少数股权。",
            ],
            "detail": [
                "{short}将用这笔资金招聘工程师并拓展海外市场。",
                "按此次交易计算，公司估值达到年营收的数倍。",
                "根据协议，{partner_short}将获得一个董事会席位。",
                "现有股东也参与了本轮融资。",
                "{short}表示，公司拒绝了另外两家投资方的报价。",
            ],
            "quote": [
                "{partner_short}一位合伙人说：“{short}拥有引领市场的产品和团队。”",
                "{short}创始人说：“这笔资金让我们能跑得更快。”",
            ],
        },
    },
    "supply_disruption": {
        "en": {
            "head": [
                "Production halt at {org} disrupts {product} supply",
                "{org} warns of delays in {product} deliveries",
                "Shortage at {org} raises supply worries for {partner}",
                "{org} halts a production line, customers check inventories",
            ],
            "lead": [
                "A breakdown at a plant run by {org} in {city} has halted production of "
                "{product}, the {industry} said on Sunday.",
                "{org}, which makes {product} for carmakers including {partner}, warned that "
                "deliveries could be delayed by up to {weeks} weeks.",
                "{org} said a shortage of raw materials had forced it to slow production of "
                "{product} at its main site in {city}.",
            ],
            "detail": [
                "{partner} said it was monitoring the situation and had enough stock for the "
                "coming weeks.",
                "{short} is trying to shift production to other factories.",
                "Engineers are replacing the damaged equipment, which is expected to take weeks.",
                "The company said about {pct}% of its output was affected.",
                "Analysts said the disruption showed how dependent carmakers are on a few "
                "specialised suppliers.",
                "{short} expects normal output to resume by {month}.",
                "Customers have been offered parts from an alternative site at no extra cost.",
            ],
            "quote": [
                "\"Our priority is to keep our customers' lines running,\" a spokesperson for "
                "{short} said.",
                "\"One small part can stop a whole assembly line,\" said a supply chain analyst.",
            ],
        },
        "zh": {
            "head": [
                "{org}工厂停产 {product}供应受阻",
                "{org}警告{product}交付将延迟",
                "{org}缺料 {partner}关注供应情况",
                "{org}一条生产线停产 客户盘点库存",
            ],
            "lead": [
                "{industry}{org}周日表示，其位于{city}的一座工厂设备发生故障，{product}生产被迫中断。",
                "为{partner}等车企供应{product}的{org}警告称，交付可能延迟最多{weeks}周。",
                "{org}表示，由于原材料短缺，{city}主工厂的{product}生产已被迫放缓。",
            ],
            "detail": [
                "{partner}表示正在密切关注，现有库存足以应付未来几周的需要。",
                "{short}正在设法把生产转移到其他工厂。",
                "工程师正在更换受损设备，预计需要数周时间。",
                "公司表示，约{pct}%的产量受到影响。",
                "分析人士指出，这次中断说明车企对少数专业供应商的依赖程度很高。",
                "{short}预计将在{month}恢复正常生产。",
                "公司已向客户提供来自其他基地的零部件，不额外收费。",
            ],
            "quote": [
                "{short}发言人说：“我们的首要任务是保证客户的生产线不停。”",
                "一位供应链分析师说：“一个小零件就可能让整条装配线停下来。”",
            ],
        },
    },
    "supply_contract": {
        "en": {
            "head": [
                "{org} wins contract to supply {partner}",
                "{partner} picks {org} for {product}",
                "{org} signs multi-year deal with {partner}",
            ],
            "lead": [
                "{org} has won a multi-year contract to supply {product} to {partner}, the "
                "{industry} said on Wednesday.",
                "{partner} has chosen {org} as a supplier of {product} for upcoming models, "
                "according to a statement from the {city}-based company.",
            ],
            "detail": [
                "The contract is worth about {amount} a year, according to people familiar "
                "with the deal.",
                "{short} will add a new production line to meet the order.",
                "Deliveries are scheduled to begin in {month}.",
                "The deal is the largest in the history of {short}.",
                "{short} beat several larger competitors in the tender.",
                "The two companies also agreed to work together on lighter materials.",
            ],
            "quote": [
                "\"Winning {partner_short} as a customer is a milestone for us,\" the chief "
                "executive of {short} said.",
                "\"The contract gives {short} visibility for years,\" an industry analyst said.",
            ],
        },
        "zh": {
            "head": [
                "{org}获得{partner}供货合同",
                "{partner}选定{org}供应{product}",
                "{org}与{partner}签署多年期协议",
            ],
            "lead": [
                "{industry}{org}周三宣布，已获得向{partner}供应{product}的多年期合同。",
                "据总部位于{city}的{org}发布的声明，{partner}已选定其作为未来车型{product}的供应商。",
            ],
            "detail": [
                "据知情人士透露，这份合同每年价值约{amount}。",
                "{short}将新增一条生产线来完成订单。",
                "首批产品计划于{month}交付。",
                "这是{short}历史上金额最大的一笔订单。",
                "在招标中，{short}击败了几家规模更大的竞争对手。",
                "双方还同意在轻量化材料方面开展合作。",
            ],
            "quote": [
                "{short}首席执行官说：“赢得{partner_short}这个客户是我们的里程碑。”",
                "一位行业分析师说：“这份合同让{short}未来几年的业务更有保障。”",
            ],
        },
    },
}

GENERIC: dict[str, dict[str, list[str]]] = {
    "en": {
        "context": [
            "{org} was founded in {city} and employs people in several countries.",
            "The {industry} sells most of its products in {country} and the rest of the region.",
            "Competition in the sector has intensified over the past few years.",
            "Investors have been watching the company closely since a change of management.",
            "The wider industry is adjusting to higher interest rates and changing demand.",
            "{short} is one of the best-known names in its field in {country}.",
            "Like many of its peers, the company has invested heavily in automation.",
            "The news comes at a busy time for companies in {country}.",
        ],
        "close": [
            "{short} will publish further details at its next results presentation.",
            "A spokesperson declined to comment beyond the statement.",
            "The company's shares were little changed in afternoon trading.",
            "Further announcements are expected in the coming weeks.",
            "The company did not disclose further financial details.",
        ],
    },
    "zh": {
        "context": [
            "{org}创立于{city}，在多个国家设有业务。",
            "这家{industry}的大部分产品销往{country}及周边地区。",
            "过去几年，行业竞争明显加剧。",
            "自管理层调整以来，投资者一直密切关注这家公司。",
            "整个行业正在适应利率上升和需求变化带来的影响。",
            "{short}是{country}该领域最知名的企业之一。",
            "与许多同行一样，公司近年来在自动化方面投入了大量资金。",
            "对{country}企业来说，这则消息发布在一个多事的时期。",
        ],
        "close": [
            "{short}将在下次业绩发布会上公布更多细节。",
            "公司发言人拒绝就声明以外的内容置评。",
            "公司股价午后交易中变化不大。",
            "预计未来几周还将有进一步消息公布。",
            "公司未透露更多财务细节。",
        ],
    },
}

# kind -> (tags, sentiment range)
KINDS: dict[str, tuple[list[str], tuple[float, float]]] = {
    "remote_work": (["policy", "remote-work"], (0.2, 0.7)),
    "earnings_up": (["earnings"], (0.45, 0.9)),
    "earnings_down": (["earnings"], (-0.75, -0.35)),
    "layoffs": (["layoffs"], (-0.9, -0.55)),
    "strike": (["labor", "strike"], (-0.85, -0.55)),
    "regulatory_fine": (["regulation", "legal"], (-0.9, -0.6)),
    "recall": (["product-recall"], (-0.85, -0.55)),
    "expansion": (["expansion"], (0.5, 0.9)),
    "product_launch": (["product"], (0.3, 0.8)),
    "sustainability": (["sustainability"], (0.3, 0.7)),
    "leadership": (["leadership", "board"], (0.0, 0.3)),
    "investment": (["investment", "funding"], (0.45, 0.85)),
    "supply_disruption": (["supply-chain"], (-0.9, -0.55)),
    "supply_contract": (["supply-chain", "partnership"], (0.4, 0.85)),
}
RECALL_INDUSTRIES = {"automotive", "auto parts", "batteries", "electronics", "seating", "glass",
                     "pharmaceuticals", "dairy", "food", "electrical equipment"}
STRIKE_INDUSTRIES = {"automotive", "auto parts", "logistics", "castings", "seating", "glass",
                     "chemicals", "dairy", "food", "drivetrain", "lithium", "composites", "wine"}
FINE_INDUSTRIES = {"banking", "insurance", "pharmaceuticals", "chemicals", "energy",
                   "cloud computing", "software", "media", "investment"}
# Kept out of generated filler: Hyundai Motor only ever appears as a supplier's customer, and
# remote-work stories are all hand-placed so seed question 000 has a known answer set.
NO_FILLER_ORGS = {"hyundai-motor"}

# (kind, lang, org id, partner id, person id, year, forced sentiment or None)
SCENARIOS: list[tuple[str, str, str, str | None, str | None, int, float | None]] = [
    # Remote work at companies where Rod Johnson is on the board (Corvel has none) ...
    ("remote_work", "en", "northwind-analytics", None, None, 2020, None),
    ("remote_work", "zh", "northwind-analytics", None, None, 2021, None),
    ("remote_work", "zh", "atelier-numerique", None, None, 2020, None),
    ("remote_work", "en", "atelier-numerique", None, None, 2022, None),
    # ... and elsewhere (distractors; Bluefin and Saffron have Ruth Johnson on the board).
    ("remote_work", "en", "bluefin-logistics", None, None, 2021, None),
    ("remote_work", "en", "saffron-media", None, None, 2020, None),
    ("remote_work", "zh", "xinghe-cloud", None, None, 2020, None),
    ("remote_work", "zh", "kanto-robotics", None, None, 2022, None),
    ("remote_work", "en", "kranich-software", None, None, 2023, None),
    ("remote_work", "zh", "maple-ridge-foods", None, None, 2021, None),
    ("leadership", "en", "corvel-insurance", None, "p-rod-johnson", 2019, None),
    ("leadership", "zh", "atelier-numerique", None, "p-rod-johnson", 2019, None),
    ("leadership", "en", "saffron-media", None, "p-ruth-johnson", 2021, None),
    # French companies: clearly negative ...
    ("regulatory_fine", "zh", "banque-aubrac", None, None, 2022, None),
    ("regulatory_fine", "en", "banque-aubrac", None, None, 2019, None),
    ("strike", "en", "transports-garonne", None, None, 2023, None),
    ("layoffs", "zh", "transports-garonne", None, None, 2020, None),
    ("recall", "en", "lumiere-electrique", None, None, 2021, None),
    ("earnings_down", "zh", "maison-verlaine", None, None, 2024, -0.68),
    # ... and positive.
    ("earnings_up", "en", "maison-verlaine", None, None, 2019, None),
    ("expansion", "zh", "sorel-composites", None, None, 2023, None),
    ("investment", "zh", "atelier-numerique", "harbor-pine", None, 2021, None),
    ("product_launch", "en", "atelier-numerique", None, None, 2023, None),
    # Suppliers of Hyundai Motor.
    ("supply_disruption", "en", "daejin-precision", "hyundai-motor", None, 2021, None),
    ("supply_contract", "zh", "daejin-precision", "hyundai-motor", None, 2019, None),
    ("expansion", "en", "hanbit-battery", None, None, 2022, None),
    ("supply_contract", "zh", "hanbit-battery", "hyundai-motor", None, 2023, None),
    ("supply_disruption", "zh", "mirae-glass", "hyundai-motor", None, 2022, None),
    ("supply_disruption", "en", "tianhe-electronics", "hyundai-motor", None, 2021, None),
    ("supply_contract", "en", "sorel-composites", "hyundai-motor", None, 2022, None),
    ("investment", "en", "hanbit-battery", "cobalt-bay", None, 2020, None),
    # Suppliers of other carmakers (distractors).
    ("strike", "en", "great-lakes-castings", None, None, 2023, None),
    ("supply_disruption", "en", "great-lakes-castings", "kestrel-motors", None, 2020, None),
    ("supply_disruption", "zh", "norvale-seating", "kestrel-motors", None, 2022, None),
    ("supply_contract", "en", "brandt-antrieb", "rhenwald", None, 2020, None),
    ("expansion", "zh", "hengxin-lithium", None, None, 2024, None),
    ("supply_contract", "zh", "lumiere-electrique", "rhenwald", None, 2022, None),
    ("supply_disruption", "zh", "hengxin-lithium", "yuanhang-auto", None, 2021, None),
]
FILLER_COUNT = 84
ZH_SHARE = 0.45
MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]
QUARTER_EN = ["Q1", "Q2", "Q3", "Q4"]
QUARTER_ZH = ["第一季度", "第二季度", "第三季度", "第四季度"]
CURRENCY_ZH = {"France": "欧元", "Germany": "欧元", "United States": "美元",
               "United Kingdom": "英镑", "China": "元", "Japan": "日元", "South Korea": "韩元",
               "Norway": "挪威克朗", "Canada": "加元", "Singapore": "新加坡元"}
ZH_FACTOR = {"China": 7, "Japan": 150, "South Korea": 1300, "Norway": 10}
AMOUNT_RANGE = {"regulatory_fine": (2, 90), "earnings_up": (12, 400), "earnings_down": (5, 120),
                "layoffs": (5, 60), "recall": (3, 40), "expansion": (40, 600),
                "investment": (15, 200), "supply_contract": (10, 120),
                "product_launch": (8, 90), "sustainability": (20, 300)}
N_RANGE = {"leadership": (7, 13), "regulatory_fine": (30, 400), "recall": (1200, 90000),
           "expansion": (120, 900), "layoffs": (80, 2400), "remote_work": (300, 6000)}


def is_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def forms(org: dict, lang: str) -> tuple[str, str]:
    """(first mention, later mention) of an organization as written in `lang`."""
    cjk = [a for a in org["aliases"] if is_cjk(a)]
    if lang == "zh":
        return max(cjk, key=len), min(cjk, key=len)
    latin = [a for a in org["aliases"] if not is_cjk(a)]
    return org["name"], (latin[0] if latin else org["name"])


def money(country: str, millions: int, lang: str) -> str:
    if lang == "zh":
        wan = millions * 100 * ZH_FACTOR.get(country, 1)
        # Chinese counts large sums in 万 (10^4) and 亿 (10^8).
        if wan < 10000:
            return f"{wan}万{CURRENCY_ZH[country]}"
        return f"{wan / 10000:.1f}".rstrip("0").rstrip(".") + "亿" + CURRENCY_ZH[country]
    if country in ("France", "Germany"):
        return f"€{millions} million"
    if country == "United Kingdom":
        return f"£{millions} million"
    if country == "United States":
        return f"${millions} million"
    if country == "Canada":
        return f"C${millions} million"
    if country == "Singapore":
        return f"S${millions} million"
    if country == "China":
        return f"{millions * 7:,} million yuan"
    if country == "Japan":
        return f"{millions * 0.15:.1f} billion yen"
    if country == "South Korea":
        return f"{round(millions * 1.3):,} billion won"
    return f"{millions * 10:,} million kroner"


def random_date(rng: random.Random, year: int) -> dt.date:
    start = dt.date(year, 1, 1)
    return start + dt.timedelta(days=rng.randrange((dt.date(year + 1, 1, 1) - start).days))


def article_length(text: str, lang: str) -> int:
    """Words for English, characters (without spaces) for Chinese."""
    return len(re.sub(r"\s", "", text)) if lang == "zh" else len(text.split())


class Fmt(dict):
    """format_map mapping that fails loudly on a slot the article has no value for."""

    def __missing__(self, key: str) -> str:
        raise KeyError(f"template slot {{{key}}} has no value")


def build_article(rng: random.Random, kind: str, lang: str, org: dict, partner: dict | None,
                  person: dict | None, date: dt.date, sentiment: float | None,
                  orgs_by_id: dict[str, dict]) -> dict:
    pools = TEMPLATES[kind][lang]
    generic = GENERIC[lang]
    en_label, zh_label, en_product, zh_product = INDUSTRY[org["industry"]]
    first, short = forms(org, lang)
    p_first, p_short = forms(partner, lang) if partner else ("", "")
    q_index = (date.month - 1) // 3 - 1
    q_year = date.year if q_index >= 0 else date.year - 1
    q_index %= 4
    later_month = (date.month - 1 + rng.randint(2, 8)) % 12
    n_lo, n_hi = N_RANGE.get(kind, (150, 3000))
    a_lo, a_hi = AMOUNT_RANGE.get(kind, (10, 150))
    days_lo, days_hi = (2, 4) if kind == "remote_work" else (2, 7)
    slots = Fmt(
        org=first, short=short, partner=p_first, partner_short=p_short,
        person=(person["name"] if lang == "en" else person["aliases"][0]) if person else "",
        city=org["city"] if lang == "en" else CITY_ZH[org["city"]],
        country=COUNTRY_EN.get(org["country"], org["country"]) if lang == "en"
        else COUNTRY_ZH[org["country"]],
        industry=en_label if lang == "en" else zh_label,
        product=en_product if lang == "en" else zh_product,
        year=str(date.year),
        quarter=(f"{QUARTER_EN[q_index]} {q_year}" if lang == "en"
                 else f"{q_year}年{QUARTER_ZH[q_index]}"),
        month=MONTHS_EN[later_month] if lang == "en" else f"{later_month + 1}月",
        # a staff survey that led to a remote-work policy found a majority in favour
        pct=str(rng.randint(55, 88) if kind == "remote_work" else rng.randint(7, 35)),
        pct2=str(rng.randint(1, 5)),
        n=f"{rng.randint(n_lo, n_hi):,}" if lang == "en" else str(rng.randint(n_lo, n_hi)),
        amount=money(org["country"], rng.randint(a_lo, a_hi), lang),
        days=str(rng.randint(days_lo, days_hi)), weeks=str(rng.randint(2, 12)),
    )

    details = rng.sample(pools["detail"], len(pools["detail"]))
    contexts = rng.sample(generic["context"], len(generic["context"]))
    head = rng.choice(pools["head"])
    paragraphs: list[list[str]] = [
        [rng.choice(pools["lead"]), details.pop()],
        [details.pop()],
        [rng.choice(pools["quote"])],
        [contexts.pop(), rng.choice(generic["close"])],
    ]
    lo, hi = ((140, 300) if lang == "en" else (220, 380))
    target = rng.randint(lo, hi)
    joiner = " " if lang == "en" else ""

    def render() -> str:
        return "\n\n".join(joiner.join(s.format_map(slots) for s in p) for p in paragraphs)

    # Grow the middle paragraphs until the article reaches its target length.
    turn = 0
    contexts = contexts[:3]
    while article_length(render(), lang) < target and (details or contexts):
        if details and (turn % 3 != 2 or not contexts):
            paragraphs[1 + turn % 2].append(details.pop())
        else:
            paragraphs[3].insert(-1, contexts.pop())
        turn += 1
    body = render()
    length = article_length(body, lang)
    limits = (120, 400) if lang == "en" else (200, 600)
    if not limits[0] <= length <= limits[1]:
        raise ValueError(f"{kind}/{lang} article for {org['id']} has length {length}")

    used = head + "".join(s for p in paragraphs for s in p)
    mentions: list[str] = []
    for slot, form in (("{org}", first), ("{short}", short), ("{partner}", p_first),
                       ("{partner_short}", p_short)):
        if slot in used and form not in mentions:
            mentions.append(form)
    title = head.format_map(slots)
    title = title[0].upper() + title[1:]
    tags, (s_lo, s_hi) = KINDS[kind]
    if sentiment is None:
        sentiment = round(rng.uniform(s_lo, s_hi), 2)
    return {"title": title, "date": date, "lang": lang, "sentiment": sentiment,
            "tags": list(tags), "mentions": mentions, "body": body, "kind": kind}


def eligible_kinds(org: dict, investors: dict[str, list[str]],
                   boards: dict[str, list[str]]) -> list[str]:
    kinds = ["earnings_up", "earnings_down", "layoffs", "expansion", "product_launch",
             "sustainability"]
    industry = org["industry"]
    if industry in RECALL_INDUSTRIES:
        kinds.append("recall")
    if industry in STRIKE_INDUSTRIES:
        kinds.append("strike")
    if industry in FINE_INDUSTRIES:
        kinds.append("regulatory_fine")
    if org.get("supplier_of"):
        kinds += ["supply_disruption", "supply_contract"]
    if investors.get(org["id"]):
        kinds.append("investment")
    if boards.get(org["id"]):
        kinds.append("leadership")
    return kinds


def front_matter(article: dict, article_id: str) -> str:
    def dump(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    return "\n".join([
        "---",
        f"id: {article_id}",
        f"title: {dump(article['title'])}",
        f"date: {article['date'].isoformat()}",
        f"lang: {article['lang']}",
        f"sentiment: {article['sentiment']}",
        f"tags: {dump(article['tags'])}",
        f"mentions: {dump(article['mentions'])}",
        "---",
        "",
    ])


def check_entities(orgs_by_id: dict[str, dict], people: list[dict]) -> dict[str, str]:
    """Validate references; return the surface form -> org id map (names and aliases)."""
    surface: dict[str, str] = {}
    for org in ORGANIZATIONS:
        for form in [org["name"], *org["aliases"]]:
            if form in surface:
                raise ValueError(f"surface form {form!r} is ambiguous")
            surface[form] = org["id"]
        for ref in org.get("supplier_of", []) + org.get("invested_in", []):
            if ref not in orgs_by_id:
                raise ValueError(f"{org['id']} refers to unknown {ref}")
    for person in people:
        for ref in person["board_member_of"]:
            if ref not in orgs_by_id:
                raise ValueError(f"{person['id']} refers to unknown {ref}")
    return surface


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")


def compute_answers(articles: list[tuple[str, dict]], surface: dict[str, str],
                    orgs_by_id: dict[str, dict]) -> dict:
    rod_orgs = {o for p in PEOPLE if p["name"] == "Rod Johnson" for o in p["board_member_of"]}
    hyundai_suppliers = {o["id"] for o in ORGANIZATIONS
                         if "hyundai-motor" in o.get("supplier_of", [])}
    french = {o["id"] for o in ORGANIZATIONS if o["country"] == "France"}

    def mentioned(article: dict) -> set[str]:
        return {surface[m] for m in article["mentions"]}

    q1 = [(p, a) for p, a in articles
          if "remote-work" in a["tags"] and mentioned(a) & rod_orgs]
    q2 = [(p, a) for p, a in articles if a["sentiment"] < -0.5 and mentioned(a) & french]
    q2_pos = [(p, a) for p, a in articles if a["sentiment"] > 0.5 and mentioned(a) & french]
    q3 = [(p, a) for p, a in articles if mentioned(a) & hyundai_suppliers]

    def names(ids: set[str]) -> list[str]:
        return sorted(orgs_by_id[i]["name"] for i in ids)

    return {
        "rod_johnson_remote_work": {
            "question": "Which companies where Rod Johnson sits on the board announced a "
                        "remote-work policy?",
            "rule": "tags contains remote-work AND mentions an org whose board has Rod Johnson",
            "organizations": names(set().union(*(mentioned(a) & rod_orgs for _, a in q1))),
            "articles": [p for p, _ in q1],
        },
        "negative_news_france": {
            "question": "Negative news about companies in France",
            "rule": "sentiment < -0.5 AND mentions an org with country France",
            "organizations": names(set().union(*(mentioned(a) & french for _, a in q2))),
            "articles": [p for p, _ in q2],
        },
        "positive_news_france": {
            "question": "Positive news about companies in France",
            "rule": "sentiment > 0.5 AND mentions an org with country France",
            "organizations": names(set().union(*(mentioned(a) & french for _, a in q2_pos))),
            "articles": [p for p, _ in q2_pos],
        },
        "hyundai_supplier_news": {
            "question": "News about suppliers of Hyundai",
            "rule": "mentions an org whose supplier_of contains hyundai-motor",
            "organizations": names(set().union(*(mentioned(a) & hyundai_suppliers
                                                 for _, a in q3))),
            "articles": [p for p, _ in q3],
            "supply_chain_articles": [p for p, a in q3 if "supply-chain" in a["tags"]],
        },
    }


def main() -> None:
    rng = random.Random(SEED)
    orgs_by_id = {o["id"]: o for o in ORGANIZATIONS}
    surface = check_entities(orgs_by_id, PEOPLE)
    investors: dict[str, list[str]] = {}
    for org in ORGANIZATIONS:
        for target in org.get("invested_in", []):
            investors.setdefault(target, []).append(org["id"])
    boards: dict[str, list[str]] = {}
    for person in PEOPLE:
        for target in person["board_member_of"]:
            boards.setdefault(target, []).append(person["id"])
    people_by_id = {p["id"]: p for p in PEOPLE}

    drafts: list[dict] = []
    for kind, lang, org_id, partner_id, person_id, year, sentiment in SCENARIOS:
        drafts.append(build_article(
            rng, kind, lang, orgs_by_id[org_id],
            orgs_by_id[partner_id] if partner_id else None,
            people_by_id[person_id] if person_id else None,
            random_date(rng, year), sentiment, orgs_by_id))
    primaries = [o for o in ORGANIZATIONS if o["id"] not in NO_FILLER_ORGS]
    for _ in range(FILLER_COUNT):
        org = rng.choice(primaries)
        kind = rng.choice(eligible_kinds(org, investors, boards))
        lang = "zh" if rng.random() < ZH_SHARE else "en"
        partner = person = None
        if kind.startswith("supply_"):
            partner = orgs_by_id[rng.choice(org["supplier_of"])]
        elif kind == "investment":
            partner = orgs_by_id[rng.choice(investors[org["id"]])]
        elif kind == "leadership":
            person = people_by_id[rng.choice(boards[org["id"]])]
        drafts.append(build_article(rng, kind, lang, org, partner, person,
                                    random_date(rng, rng.randint(2019, 2024)), None, orgs_by_id))

    drafts.sort(key=lambda a: (a["date"], a["lang"], a["title"]))
    zh_share = sum(a["lang"] == "zh" for a in drafts) / len(drafts)
    if zh_share < 0.35:
        raise ValueError(f"only {zh_share:.0%} of the articles are Chinese")
    bodies = [a["body"] for a in drafts]
    if len(set(bodies)) != len(bodies):
        raise ValueError("two generated articles are identical")

    article_dir = OUT_DIR / "articles"
    if article_dir.exists():
        for old in article_dir.glob("*.md"):
            old.unlink()
    article_dir.mkdir(parents=True, exist_ok=True)
    written: list[tuple[str, dict]] = []
    for number, article in enumerate(drafts, start=1):
        article_id = f"news-{number:03d}"
        rel = f"articles/{number:03d}-{article['lang']}-{article['kind'].replace('_', '-')}.md"
        (OUT_DIR / rel).write_text(front_matter(article, article_id) + "\n" + article["body"]
                                   + "\n", encoding="utf-8")
        written.append((rel, article))

    write_jsonl(OUT_DIR / "organizations.jsonl", [
        {"id": o["id"], "name": o["name"], "aliases": o["aliases"], "city": o["city"],
         "country": o["country"], "industry": o["industry"],
         "supplier_of": o.get("supplier_of", []), "invested_in": o.get("invested_in", [])}
        for o in ORGANIZATIONS])
    write_jsonl(OUT_DIR / "people.jsonl", [
        {"id": p["id"], "name": p["name"], "aliases": p["aliases"],
         "board_member_of": p["board_member_of"]} for p in PEOPLE])
    answers = compute_answers(written, surface, orgs_by_id)
    (OUT_DIR / "answers.json").write_text(
        json.dumps(answers, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(written)} articles ({zh_share:.0%} zh), {len(ORGANIZATIONS)} orgs, "
          f"{len(PEOPLE)} people to {OUT_DIR}")


if __name__ == "__main__":
    main()
